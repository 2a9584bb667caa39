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
var<workgroup> dot_result: array<f32, 2048>;
var<workgroup> dot_a: array<f32, 512>;
var<workgroup> dot_b: array<f32, 1024>;

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

@compute @workgroup_size(256, 1, 1) 
fn main(@builtin(local_invocation_index) local_index: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>) {
    var i: i32;
    var j: i32;
    var local: f32;
    var local_1: f32;
    var local_2: f32;
    var local_3: f32;
    var local_4: f32;
    var local_5: f32;
    var local_6: f32;
    var local_7: f32;
    var local_8: u32;
    var i_1: u32;
    var local_9: f32;
    var i_2: u32;
    var local_10: f32;
    var local_11: u32;
    var i_3: u32;

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
        let _e39 = j;
        let _e41 = i;
        let _e43 = i;
        let _e45 = j;
        let _e50 = (local_index % 16u);
        let _e51 = (local_index / 16u);
        let _e53 = (_e51 + 0u);
        let _e55 = (_e51 + 16u);
        let _e57 = (_e50 + 0u);
        let _e59 = (_e50 + 16u);
        let _e61 = (_e50 + 32u);
        let _e63 = (_e50 + 48u);
        local = 0f;
        local_1 = 0f;
        local_2 = 0f;
        local_3 = 0f;
        local_4 = 0f;
        local_5 = 0f;
        local_6 = 0f;
        local_7 = 0f;
        local_8 = 0u;
        loop {
            let _e85 = local_8;
            if (_e85 >= ((_e5 + 15u) / 16u)) {
                break;
            }
            let _e87 = (_e85 * 16u);
            workgroupBarrier();
            i_1 = local_index;
            loop {
                let _e96 = i_1;
                if (_e96 >= ((1u * 32u) * 16u)) {
                    break;
                }
                let _e100 = (_e87 + (_e96 % 16u));
                if (_e100 < _e5) {
                    let _e105 = select(_e100, 0u, (_e5 == 1u));
                    let _e109 = (bitcast<u32>(_e41) + (_e96 / 16u));
                    let _e117 = ((((0u * _e3) + _e109) * _e5) + _e105);
                    local_9 = 0f;
                    if ((true && (_e109 < _e3)) && (_e105 < _e5)) {
                        let _e127 = A[(_e117 >> 1u)];
                        let _e131 = decode_f16_(((_e127 >> ((_e117 & 1u) << 4u)) & 65535u));
                        local_9 = _e131;
                    }
                    let _e132 = local_9;
                    dot_a[_e96] = _e132;
                }
                continuing {
                    let _e135 = i_1;
                    i_1 = (_e135 + 256u);
                }
            }
            i_2 = local_index;
            loop {
                let _e143 = i_2;
                if (_e143 >= ((1u * 16u) * 64u)) {
                    break;
                }
                let _e147 = (_e87 + (_e143 / 64u));
                if (_e147 < _e5) {
                    let _e152 = select(_e147, 0u, (_e5 == 1u));
                    let _e160 = (bitcast<u32>(_e39) + (_e143 % 64u));
                    let _e164 = ((((0u * _e5) + _e152) * _e7) + _e160);
                    local_10 = 0f;
                    if ((true && (_e152 < _e5)) && (_e160 < _e7)) {
                        let _e174 = B[(_e164 >> 1u)];
                        let _e178 = decode_f16_(((_e174 >> ((_e164 & 1u) << 4u)) & 65535u));
                        local_10 = _e178;
                    }
                    let _e179 = local_10;
                    dot_b[_e143] = _e179;
                }
                continuing {
                    let _e182 = i_2;
                    i_2 = (_e182 + 256u);
                }
            }
            workgroupBarrier();
            local_11 = 0u;
            loop {
                let _e193 = local_11;
                if (_e193 >= min((_e5 - _e87), 16u)) {
                    break;
                }
                let _e198 = dot_a[((_e53 * 16u) + _e193)];
                let _e202 = dot_a[((_e55 * 16u) + _e193)];
                let _e203 = (_e193 * 64u);
                let _e207 = dot_b[(_e203 + _e57)];
                let _e211 = dot_b[(_e203 + _e59)];
                let _e215 = dot_b[(_e203 + _e61)];
                let _e219 = dot_b[(_e203 + _e63)];
                let _e221 = local;
                local = (_e221 + (_e198 * _e207));
                let _e224 = local_1;
                local_1 = (_e224 + (_e198 * _e211));
                let _e227 = local_2;
                local_2 = (_e227 + (_e198 * _e215));
                let _e230 = local_3;
                local_3 = (_e230 + (_e198 * _e219));
                let _e233 = local_4;
                local_4 = (_e233 + (_e202 * _e207));
                let _e236 = local_5;
                local_5 = (_e236 + (_e202 * _e211));
                let _e239 = local_6;
                local_6 = (_e239 + (_e202 * _e215));
                let _e242 = local_7;
                local_7 = (_e242 + (_e202 * _e219));
                continuing {
                    let _e244 = local_11;
                    local_11 = (_e244 + 1u);
                }
            }
            continuing {
                let _e247 = local_8;
                local_8 = (_e247 + 1u);
            }
        }
        let _e251 = (_e53 * 64u);
        let _e253 = local;
        dot_result[(_e251 + _e57)] = _e253;
        let _e257 = local_1;
        dot_result[(_e251 + _e59)] = _e257;
        let _e261 = local_2;
        dot_result[(_e251 + _e61)] = _e261;
        let _e265 = local_3;
        dot_result[(_e251 + _e63)] = _e265;
        let _e268 = (_e55 * 64u);
        let _e270 = local_4;
        dot_result[(_e268 + _e57)] = _e270;
        let _e274 = local_5;
        dot_result[(_e268 + _e59)] = _e274;
        let _e278 = local_6;
        dot_result[(_e268 + _e61)] = _e278;
        let _e282 = local_7;
        dot_result[(_e268 + _e63)] = _e282;
        workgroupBarrier();
        i_3 = local_index;
        loop {
            let _e292 = i_3;
            if (_e292 >= ((1u * 32u) * 64u)) {
                break;
            }
            let _e294 = (_e292 % 64u);
            let _e295 = (_e292 / 64u);
            let _e299 = (bitcast<u32>(_e43) + _e295);
            let _e305 = (bitcast<u32>(_e45) + _e294);
            let _e309 = ((((0u * _e3) + _e299) * _e7) + _e305);
            if ((true && (_e299 < _e3)) && (_e305 < _e7)) {
                let _e319 = dot_result[((((0u * 32u) + _e295) * 64u) + _e294)];
                let _e320 = bitcast<u32>(_e319);
                let _e328 = encode_f16_(bitcast<f32>(select(_e320, 2143289344u, ((_e320 & 2147483647u) > 2139095040u))));
                let _e335 = ((_e309 & 1u) << 4u);
                atomicAnd((&C[(_e309 >> 1u)]), ~((65535u << _e335)));
                atomicOr((&C[(_e309 >> 1u)]), (_e328 << _e335));
            }
            continuing {
                let _e340 = i_3;
                i_3 = (_e340 + 256u);
            }
        }
    }
}
