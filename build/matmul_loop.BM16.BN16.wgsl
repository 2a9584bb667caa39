struct Params {
    dim_M: u32,
    dim_K: u32,
    dim_N: u32,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
}

@group(0) @binding(0) 
var<uniform> params: Params;
@group(0) @binding(1) 
var<storage> A: array<u32>;
@group(0) @binding(2) 
var<storage> B: array<u32>;
@group(0) @binding(3) 
var<storage, read_write> C: array<atomic<u32>>;
var<workgroup> acc_2_: array<f32, 256>;
var<workgroup> staging_f32_: array<f32, 256>;
var<workgroup> dot_result: array<f32, 256>;
var<workgroup> dot_a: array<f32, 256>;
var<workgroup> dot_b: array<f32, 256>;

fn decode_f16_(a: u32) -> f32 {
    let _e4 = ((a & 32768u) << 16u);
    let _e8 = ((a >> 10u) & 31u);
    let _e10 = (a & 1023u);
    let _e12 = (_e10 << 13u);
    let _e32 = (countLeadingZeros(_e10) - 22u);
    return bitcast<f32>(select(select(((_e4 | ((_e8 + 112u) << 23u)) | _e12), select(((_e4 | ((112u - _e32) << 23u)) | ((_e10 << ((_e32 + 14u) & 31u)) & 8388607u)), _e4, (_e10 == 0u)), (_e8 == 0u)), (((_e4 | 2139095040u) | _e12) | (select(0u, 1u, (_e10 != 0u)) << 22u)), (_e8 == 31u)));
}

fn encode_f16_(a_1: f32) -> u32 {
    let _e1 = bitcast<u32>(a_1);
    let _e5 = ((_e1 & 2147483648u) >> 16u);
    let _e7 = (_e1 & 8388607u);
    let _e11 = ((_e1 & 2147483647u) >> 23u);
    let _e13 = (_e7 >> 13u);
    let _e15 = (_e5 | 31744u);
    let _e51 = (_e7 | 8388608u);
    let _e53 = (126u - _e11);
    let _e59 = select(24u, _e53, ((_e53 - 14u) < 11u));
    let _e64 = (1u << (_e59 - 1u));
    return select(select(select(select(_e5, ((_e5 | (_e51 >> _e59)) + select(0u, 1u, (((_e51 & _e64) != 0u) && ((_e51 & ((_e64 * 3u) - 1u)) != 0u)))), (select(0u, 1u, (_e11 < 102u)) == 0u)), (((_e5 | ((_e11 - 112u) << 10u)) | _e13) + select(0u, 1u, (((_e1 & 4096u) != 0u) && ((_e1 & ((4096u * 3u) - 1u)) != 0u)))), (select(0u, 1u, (_e11 < 113u)) == 0u)), _e15, (select(0u, 1u, (_e11 < 143u)) == 0u)), ((_e15 | (select(0u, 1u, ((_e7 & 8388607u) != 0u)) << 9u)) | _e13), (_e11 == 255u));
}

@compute @workgroup_size(64, 1, 1) 
fn main(@builtin(local_invocation_index) local_index: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>) {
    var i: i32;
    var j: i32;
    var kb: i32;
    var k: i32;
    var i_1: u32;
    var local: f32;
    var local_1: f32;
    var local_2: f32;
    var local_3: f32;
    var local_4: u32;
    var i_2: u32;
    var local_5: f32;
    var i_3: u32;
    var local_6: f32;
    var local_7: u32;
    var i_4: u32;
    var i_5: u32;

    let _e3 = params.dim_M;
    let _e5 = params.dim_K;
    let _e7 = params.dim_N;
    let _e9 = params.grid_x;
    let _e11 = params.grid_y;
    let _e13 = params.grid_z;
    let _e20 = (workgroup_id.x + (workgroup_id.y * num_workgroups.x));
    if (_e20 < ((_e9 * _e11) * _e13)) {
        let _e26 = (_e20 / _e9);
        i = (bitcast<i32>((_e20 % _e9)) * 16i);
        j = (bitcast<i32>((_e26 % _e11)) * 16i);
        i_1 = local_index;
        loop {
            let _e46 = i_1;
            if (_e46 >= ((1u * 16u) * 16u)) {
                break;
            }
            acc_2_[_e46] = 0f;
            continuing {
                let _e52 = i_1;
                i_1 = (_e52 + 64u);
            }
        }
        storageBarrier();
        workgroupBarrier();
        let _e56 = bitcast<i32>(_e5);
        let _e65 = ((32i == 0i) || ((_e56 == i32(-2147483648)) && (32i == -1i)));
        kb = 0i;
        loop {
            let _e72 = kb;
            if (_e72 >= select((_e56 / select(32i, 1i, _e65)), _e56, _e65)) {
                break;
            }
            let _e75 = kb;
            k = (_e75 * 32i);
            let _e80 = j;
            let _e82 = k;
            let _e84 = k;
            let _e86 = i;
            let _e92 = (local_index % 4u);
            let _e95 = ((local_index / 4u) + 0u);
            let _e97 = (_e92 + 0u);
            let _e99 = (_e92 + 4u);
            let _e101 = (_e92 + 8u);
            let _e103 = (_e92 + 12u);
            let _e114 = acc_2_[((((0u * 16u) + _e95) * 16u) + _e97)];
            local = _e114;
            let _e125 = acc_2_[((((0u * 16u) + _e95) * 16u) + _e99)];
            local_1 = _e125;
            let _e136 = acc_2_[((((0u * 16u) + _e95) * 16u) + _e101)];
            local_2 = _e136;
            let _e147 = acc_2_[((((0u * 16u) + _e95) * 16u) + _e103)];
            local_3 = _e147;
            local_4 = 0u;
            loop {
                let _e153 = local_4;
                if (_e153 >= ((32u + 15u) / 16u)) {
                    break;
                }
                let _e155 = (_e153 * 16u);
                workgroupBarrier();
                i_2 = local_index;
                loop {
                    let _e164 = i_2;
                    if (_e164 >= ((1u * 16u) * 16u)) {
                        break;
                    }
                    let _e168 = (_e155 + (_e164 % 16u));
                    if (_e168 < 32u) {
                        let _e173 = (bitcast<u32>(_e86) + (_e164 / 16u));
                        let _e179 = (bitcast<u32>(_e84) + _e168);
                        let _e183 = ((((0u * _e3) + _e173) * _e5) + _e179);
                        local_5 = 0f;
                        if ((true && (_e173 < _e3)) && (_e179 < _e5)) {
                            let _e193 = A[(_e183 >> 1u)];
                            let _e197 = decode_f16_(((_e193 >> ((_e183 & 1u) << 4u)) & 65535u));
                            local_5 = _e197;
                        }
                        let _e198 = local_5;
                        dot_a[_e164] = _e198;
                    }
                    continuing {
                        let _e201 = i_2;
                        i_2 = (_e201 + 64u);
                    }
                }
                i_3 = local_index;
                loop {
                    let _e209 = i_3;
                    if (_e209 >= ((1u * 16u) * 16u)) {
                        break;
                    }
                    let _e213 = (_e155 + (_e209 / 16u));
                    if (_e213 < 32u) {
                        let _e218 = (bitcast<u32>(_e82) + _e213);
                        let _e224 = (bitcast<u32>(_e80) + (_e209 % 16u));
                        let _e228 = ((((0u * _e5) + _e218) * _e7) + _e224);
                        local_6 = 0f;
                        if ((true && (_e218 < _e5)) && (_e224 < _e7)) {
                            let _e238 = B[(_e228 >> 1u)];
                            let _e242 = decode_f16_(((_e238 >> ((_e228 & 1u) << 4u)) & 65535u));
                            local_6 = _e242;
                        }
                        let _e243 = local_6;
                        dot_b[_e209] = _e243;
                    }
                    continuing {
                        let _e246 = i_3;
                        i_3 = (_e246 + 64u);
                    }
                }
                workgroupBarrier();
                local_7 = 0u;
                loop {
                    let _e256 = local_7;
                    if (_e256 >= min((32u - _e155), 16u)) {
                        break;
                    }
                    let _e261 = dot_a[((_e95 * 16u) + _e256)];
                    let _e262 = (_e256 * 16u);
                    let _e266 = dot_b[(_e262 + _e97)];
                    let _e270 = dot_b[(_e262 + _e99)];
                    let _e274 = dot_b[(_e262 + _e101)];
                    let _e278 = dot_b[(_e262 + _e103)];
                    let _e280 = local;
                    local = (_e280 + (_e261 * _e266));
                    let _e283 = local_1;
                    local_1 = (_e283 + (_e261 * _e270));
                    let _e286 = local_2;
                    local_2 = (_e286 + (_e261 * _e274));
                    let _e289 = local_3;
                    local_3 = (_e289 + (_e261 * _e278));
                    continuing {
                        let _e291 = local_7;
                        local_7 = (_e291 + 1u);
                    }
                }
                continuing {
                    let _e294 = local_4;
                    local_4 = (_e294 + 1u);
                }
            }
            let _e298 = (_e95 * 16u);
            let _e300 = local;
            dot_result[(_e298 + _e97)] = _e300;
            let _e304 = local_1;
            dot_result[(_e298 + _e99)] = _e304;
            let _e308 = local_2;
            dot_result[(_e298 + _e101)] = _e308;
            let _e312 = local_3;
            dot_result[(_e298 + _e103)] = _e312;
            workgroupBarrier();
            i_4 = local_index;
            loop {
                let _e322 = i_4;
                if (_e322 >= ((1u * 16u) * 16u)) {
                    break;
                }
                let _e324 = (_e322 % 16u);
                let _e325 = (_e322 / 16u);
                if ((true && (_e325 < 16u)) && (_e324 < 16u)) {
                    let _e347 = dot_result[((((0u * 16u) + _e325) * 16u) + _e324)];
                    acc_2_[((((0u * 16u) + _e325) * 16u) + _e324)] = _e347;
                }
                continuing {
                    let _e350 = i_4;
                    i_4 = (_e350 + 64u);
                }
            }
            storageBarrier();
            workgroupBarrier();
            continuing {
                let _e354 = kb;
                kb = (_e354 + 1i);
            }
        }
        let _e358 = i;
        let _e360 = j;
        i_5 = local_index;
        loop {
            let _e368 = i_5;
            if (_e368 >= ((1u * 16u) * 16u)) {
                break;
            }
            let _e370 = (_e368 % 16u);
            let _e371 = (_e368 / 16u);
            let _e375 = (bitcast<u32>(_e358) + _e371);
            let _e381 = (bitcast<u32>(_e360) + _e370);
            let _e385 = ((((0u * _e3) + _e375) * _e7) + _e381);
            if ((true && (_e375 < _e3)) && (_e381 < _e7)) {
                let _e395 = acc_2_[((((0u * 16u) + _e371) * 16u) + _e370)];
                let _e396 = bitcast<u32>(_e395);
                let _e404 = encode_f16_(bitcast<f32>(select(_e396, 2143289344u, ((_e396 & 2147483647u) > 2139095040u))));
                let _e411 = ((_e385 & 1u) << 4u);
                atomicAnd((&C[(_e385 >> 1u)]), ~((65535u << _e411)));
                atomicOr((&C[(_e385 >> 1u)]), (_e404 << _e411));
            }
            continuing {
                let _e416 = i_5;
                i_5 = (_e416 + 64u);
            }
        }
    }
}
