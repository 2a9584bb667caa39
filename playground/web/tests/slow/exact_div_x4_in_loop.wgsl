// Reduced from a kernel of float operations at R=8 (issue 28): exact mode's
// correctly rounded division (`exact_div`, as compiler/gpu/src/exact.rs emits
// it) called four times, once per element of a 16-byte store, inside the
// store's loop. Chromium's SwiftShader WebGPU (Chromium 156, Debian) takes
// minutes to create its compute pipeline, then drops the page's WebGPU
// instance ("Instance dropped in popErrorScope"). Two calls, or no loop, or
// the division's 26-step loop alone, take well under a second. Run it with
// PHOBOS_SLOW_MODULES=1 (playground/web/tests/modules.mjs).
@group(0) @binding(0)
var<storage, read_write> A: array<vec4<f32>>;

fn exact_div(a: f32, b: f32) -> f32 {
    var local_1: u32;
    var local_2: u32;
    var local_3: u32;
    var local_4: u32;

    let _e1 = bitcast<u32>(a);
    let _e3 = bitcast<u32>(b);
    let _e7 = bitcast<u32>((bitcast<f32>(_e1) / bitcast<f32>(_e3)));
    let _e9 = (_e1 & 2147483647u);
    let _e10 = (_e3 & 2147483647u);
    let _e11 = (_e7 & 2147483647u);
    let _e13 = (_e9 >> 23u);
    let _e14 = (_e10 >> 23u);
    let _e15 = (_e11 >> 23u);
    let _e19 = ((_e1 & 8388607u) | 8388608u);
    let _e21 = ((_e3 & 8388607u) | 8388608u);
    let _e23 = ((_e7 & 8388607u) | 8388608u);
    let _e35 = (((_e13 + 127u) - _e14) - _e15);
    let _e41 = (_e35 & 1u);
    let _e45 = ((_e19 << (_e41 + 23u)) - (_e23 * _e21));
    let _e47 = (_e23 >> 4u);
    let _e66 = (0u - _e21);
    let _e69 = (2147483647u < _e45);
    let _e70 = (_e45 < _e21);
    let _e75 = (_e45 - select(select(_e21, _e66, _e69), 0u, _e70));
    let _e77 = (2147483647u < _e75);
    let _e78 = (_e75 < _e21);
    let _e83 = (_e75 - select(select(_e21, _e66, _e77), 0u, _e78));
    let _e85 = (2147483647u < _e83);
    let _e86 = (_e83 < _e21);
    let _e91 = (_e83 - select(select(_e21, _e66, _e85), 0u, _e86));
    let _e92 = (((_e23 + select(select(1u, 4294967295u, _e69), 0u, _e70)) + select(select(1u, 4294967295u, _e77), 0u, _e78)) + select(select(1u, 4294967295u, _e85), 0u, _e86));
    let _e95 = (_e92 - 8388608u);
    let _e111 = ((_e1 ^ _e3) & 2147483648u);
    let _e119 = ((_e9 == 0u) && ((_e10 - 1u) < 2139095039u));
    local_1 = select(((((_e11 & 2139095040u) + _e95) + select(0u, 1u, (_e21 < ((_e91 + _e91) + (_e92 & 1u))))) | _e111), _e111, _e119);
    if (((((((((_e13 - 1u) < 254u) && ((_e14 - 1u) < 254u)) && ((_e15 - 1u) < 254u)) && (_e35 < 2u)) && ((((_e19 << (_e41 + 7u)) - ((_e47 * (_e21 >> 12u)) + ((_e47 * (_e21 & 4095u)) >> 12u))) + 8192u) < 16384u)) && (_e91 < _e21)) && (_e95 < 8388608u)) || _e119) {
    } else {
        let _e127 = (_e1 & 2147483647u);
        let _e128 = (_e3 & 2147483647u);
        let _e133 = (_e127 == 2139095040u);
        let _e134 = (_e128 == 2139095040u);
        let _e135 = (_e127 == 0u);
        let _e136 = (_e128 == 0u);
        let _e145 = (_e127 >> 23u);
        let _e147 = (_e127 & 8388607u);
        let _e149 = (_e145 == 0u);
        let _e154 = ((countLeadingZeros(_e147) - 8u) & 31u);
        let _e158 = select((_e147 | 8388608u), (_e147 << _e154), _e149);
        let _e165 = (_e128 >> 23u);
        let _e167 = (_e128 & 8388607u);
        let _e169 = (_e165 == 0u);
        let _e174 = ((countLeadingZeros(_e167) - 8u) & 31u);
        let _e178 = select((_e167 | 8388608u), (_e167 << _e174), _e169);
        let _e187 = select(0u, 1u, (_e158 < _e178));
        let _e192 = (((select((_e145 + 64u), (65u - _e154), _e149) + 639u) - select((_e165 + 64u), (65u - _e174), _e169)) - _e187);
        local_2 = (_e158 << _e187);
        local_3 = 0u;
        local_4 = 0u;
        loop {
            let _e198 = local_4;
            if (_e198 < 26u) {
            } else {
                break;
            }
            let _e201 = local_2;
            let _e202 = local_3;
            let _e203 = (_e201 < _e178);
            let _e206 = (_e202 << 1u);
            local_2 = (select((_e201 - _e178), _e201, _e203) << 1u);
            local_3 = select((_e206 | 1u), _e206, _e203);
            local_4 = (_e198 + 1u);
        }
        let _e213 = local_2;
        let _e214 = local_3;
        let _e220 = ((_e214 << 1u) | select(0u, 1u, (_e213 != 0u)));
        let _e223 = (_e192 < 513u);
        let _e224 = (513u - _e192);
        let _e228 = select(0u, select(_e224, 31u, (31u < _e224)), _e223);
        let _e229 = (_e220 >> _e228);
        let _e236 = select(_e220, (_e229 | select(0u, 1u, ((_e229 << _e228) != _e220))), _e223);
        let _e244 = (_e236 >> 3u);
        local_1 = select((select(select(select(((((select((_e192 - 512u), 1u, _e223) - 1u) << 23u) + _e244) + select(0u, 1u, (4u < ((_e236 & 7u) + (_e244 & 1u))))), 2139095040u, (766u < _e192)), 0u, (_e135 || _e134)), 2139095040u, (_e133 || _e136)) | ((_e1 ^ _e3) & 2147483648u)), 2143289344u, ((((2139095040u < _e127) || (2139095040u < _e128)) || (_e133 && _e134)) || (_e135 && _e136)));
    }
    let _e264 = local_1;
    return bitcast<f32>(_e264);
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_index) i: u32) {
    for (var j = i; j < 128u; j += 64u) {
        let v = A[j];
        A[j] = vec4<f32>(exact_div(v.x, v.y), exact_div(v.y, v.z), exact_div(v.z, v.w), exact_div(v.w, v.x));
    }
}
