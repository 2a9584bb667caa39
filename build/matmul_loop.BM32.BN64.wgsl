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
var<workgroup> acc_2_: array<f32, 2048>;
var<workgroup> staging_f32_: array<f32, 2048>;

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
    var i_2: u32;
    var local: f32;
    var local_1: u32;
    var local_2: f32;
    var local_3: f32;
    var i_3: u32;
    var i_4: u32;

    let _e3 = params.dim_M;
    let _e5 = params.dim_K;
    let _e7 = params.dim_N;
    let _e9 = params.grid_x;
    let _e11 = params.grid_y;
    let _e13 = params.grid_z;
    let _e20 = (workgroup_id.x + (workgroup_id.y * num_workgroups.x));
    if (_e20 < ((_e9 * _e11) * _e13)) {
        let _e26 = (_e20 / _e9);
        i = (bitcast<i32>((_e20 % _e9)) * 32i);
        j = (bitcast<i32>((_e26 % _e11)) * 64i);
        i_1 = local_index;
        loop {
            let _e46 = i_1;
            if (_e46 >= ((1u * 32u) * 64u)) {
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
            i_2 = local_index;
            loop {
                let _e94 = i_2;
                if (_e94 >= ((1u * 32u) * 64u)) {
                    break;
                }
                let _e96 = (_e94 % 64u);
                let _e97 = (_e94 / 64u);
                if ((true && (_e97 < 32u)) && (_e96 < 64u)) {
                    let _e119 = acc_2_[((((0u * 32u) + _e97) * 64u) + _e96)];
                    local = _e119;
                    local_1 = 0u;
                    loop {
                        let _e124 = local_1;
                        if (_e124 >= 32u) {
                            break;
                        }
                        let _e129 = (bitcast<u32>(_e86) + _e97);
                        let _e135 = (bitcast<u32>(_e84) + _e124);
                        let _e139 = ((((0u * _e3) + _e129) * _e5) + _e135);
                        local_2 = 0f;
                        if ((true && (_e129 < _e3)) && (_e135 < _e5)) {
                            let _e149 = A[(_e139 >> 1u)];
                            let _e153 = decode_f16_(((_e149 >> ((_e139 & 1u) << 4u)) & 65535u));
                            local_2 = _e153;
                        }
                        let _e154 = local_2;
                        let _e158 = (bitcast<u32>(_e82) + _e124);
                        let _e164 = (bitcast<u32>(_e80) + _e96);
                        let _e168 = ((((0u * _e5) + _e158) * _e7) + _e164);
                        local_3 = 0f;
                        if ((true && (_e158 < _e5)) && (_e164 < _e7)) {
                            let _e178 = B[(_e168 >> 1u)];
                            let _e182 = decode_f16_(((_e178 >> ((_e168 & 1u) << 4u)) & 65535u));
                            local_3 = _e182;
                        }
                        let _e183 = local_3;
                        let _e185 = local;
                        local = (_e185 + (_e154 * _e183));
                        continuing {
                            let _e187 = local_1;
                            local_1 = (_e187 + 1u);
                        }
                    }
                    let _e190 = local;
                    staging_f32_[_e94] = _e190;
                }
                continuing {
                    let _e193 = i_2;
                    i_2 = (_e193 + 64u);
                }
            }
            workgroupBarrier();
            i_3 = local_index;
            loop {
                let _e201 = i_3;
                if (_e201 >= ((1u * 32u) * 64u)) {
                    break;
                }
                let _e203 = (_e201 % 64u);
                let _e204 = (_e201 / 64u);
                if ((true && (_e204 < 32u)) && (_e203 < 64u)) {
                    let _e219 = staging_f32_[_e201];
                    acc_2_[((((0u * 32u) + _e204) * 64u) + _e203)] = _e219;
                }
                continuing {
                    let _e222 = i_3;
                    i_3 = (_e222 + 64u);
                }
            }
            storageBarrier();
            workgroupBarrier();
            continuing {
                let _e226 = kb;
                kb = (_e226 + 1i);
            }
        }
        let _e230 = i;
        let _e232 = j;
        i_4 = local_index;
        loop {
            let _e240 = i_4;
            if (_e240 >= ((1u * 32u) * 64u)) {
                break;
            }
            let _e242 = (_e240 % 64u);
            let _e243 = (_e240 / 64u);
            let _e247 = (bitcast<u32>(_e230) + _e243);
            let _e253 = (bitcast<u32>(_e232) + _e242);
            let _e257 = ((((0u * _e3) + _e247) * _e7) + _e253);
            if ((true && (_e247 < _e3)) && (_e253 < _e7)) {
                let _e267 = acc_2_[((((0u * 32u) + _e243) * 64u) + _e242)];
                let _e268 = bitcast<u32>(_e267);
                let _e276 = encode_f16_(bitcast<f32>(select(_e268, 2143289344u, ((_e268 & 2147483647u) > 2139095040u))));
                let _e283 = ((_e257 & 1u) << 4u);
                atomicAnd((&C[(_e257 >> 1u)]), ~((65535u << _e283)));
                atomicOr((&C[(_e257 >> 1u)]), (_e276 << _e283));
            }
            continuing {
                let _e288 = i_4;
                i_4 = (_e288 + 64u);
            }
        }
    }
}
