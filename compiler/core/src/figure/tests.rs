//! The figure's SVG and caption: counted cells, classes, escaping, and the
//! numbers written as the page wrote them.

use super::*;

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn a_uniform_tile_has_a_rect_a_cell_and_the_seed_caption_form() {
    let vals: Vec<f64> = (0..256).map(|i| f64::from(i) / 256.0).collect();
    let fig = Figure::new("uniform", &[8, 32], &vals).unwrap();
    assert_eq!(fig.shading(), Shading::Uniform);
    assert_eq!(fig.grid(), (8, 32));
    let svg = fig.tile_svg();
    assert_eq!(count(&svg, "<rect "), 256);
    assert_eq!(count(&svg, "<title>"), 256);
    assert!(svg.contains(r#"data-rows="8" data-cols="32""#));
    assert!(svg.contains(r#"class="tile tile-uniform""#));
    assert!(svg.contains("<title>[1, 0] = 0.125</title>"));
    assert_eq!(
        fig.caption(),
        "uniform: 256 counters, mean 0.498; each a multiple of 2^-23 in [0, 1)."
    );
}

#[test]
fn dropout_cells_are_kept_or_dropped() {
    let vals = [0.0, 2.0, 2.0, 0.0, 2.0, 2.0];
    let fig = Figure::new("dropout", &[2, 3], &vals).unwrap();
    let svg = fig.tile_svg();
    assert_eq!(count(&svg, r#"class="cell kept""#), 4);
    assert_eq!(count(&svg, r#"class="cell dropped""#), 2);
    assert_eq!(
        fig.caption(),
        "dropout: 6 counters, 4 kept (66.7%); every kept value is 2.0."
    );
    assert_eq!(count(&fig.legend_svg(), "<rect "), 2);
}

#[test]
fn randn_cells_are_signed() {
    let vals = [-1.5, 0.0, 4.0, -3.5];
    let fig = Figure::new("randn", &[4], &vals).unwrap();
    let svg = fig.tile_svg();
    assert_eq!(count(&svg, r#"class="cell neg""#), 2);
    assert_eq!(count(&svg, r#"class="cell pos""#), 2);
    assert!(svg.contains(r#"fill-opacity="0.500""#));
    assert!(
        fig.caption().ends_with("; 2 of 4 in [-3, 3]."),
        "{}",
        fig.caption()
    );
}

#[test]
fn other_names_are_heat_maps_and_large_ones_one_image() {
    let vals: Vec<f64> = (0..100).map(f64::from).collect();
    let fig = Figure::new("y", &[10, 10], &vals).unwrap();
    assert_eq!(fig.shading(), Shading::Heat);
    let svg = fig.tile_svg();
    assert!(
        svg.contains(r#"fill="rgb(68,1,84)""#),
        "the lowest is the ramp's start"
    );
    assert!(
        svg.contains(r#"fill="rgb(253,231,37)""#),
        "the highest its end"
    );
    assert_eq!(
        fig.caption(),
        "y: 100 values, mean 49.500, from 0.000 to 99.000."
    );
    assert!(fig.legend_svg().contains(">99.000</text>"));

    let big = vec![1.0; 100 * 100];
    let fig = Figure::new("y", &[100, 100], &big).unwrap();
    assert!(fig.is_image());
    let svg = fig.tile_svg();
    assert_eq!(count(&svg, "<rect "), 0);
    assert_eq!(count(&svg, "<image "), 1);
    assert!(svg.contains(r#"href="data:image/png;base64,iVBORw0KGgo"#));
}

#[test]
fn shapes_flatten_to_rows_of_the_last_axis() {
    let vals = [0.5; 24];
    assert_eq!(Figure::new("y", &[2, 3, 4], &vals).unwrap().grid(), (6, 4));
    assert_eq!(Figure::new("y", &[], &vals[..1]).unwrap().grid(), (1, 1));
    let err = Figure::new("y", &[5, 5], &vals).unwrap_err();
    assert!(err.contains("24 values"), "{err}");
    assert_eq!(
        Figure::new("y", &[0, 4], &[]).unwrap().caption(),
        "y: no elements."
    );
    // A shape whose product overflows is refused, not a panic.
    let err = Figure::new("y", &[1 << 40, 1 << 40, 1 << 40], &vals).unwrap_err();
    assert!(
        err.contains("holds 1329227995784915872903807060280344576"),
        "{err}"
    );
}

#[test]
fn names_are_escaped() {
    let vals = [1.0];
    let fig = Figure::new("<b>&\"'", &[1], &vals).unwrap();
    let html = fig.html();
    assert!(!html.contains("<b>"));
    assert!(html.contains("&lt;b&gt;&amp;&quot;&#39;"));
}

#[test]
fn words_decode_by_element_type() {
    assert_eq!(values(Scalar::F32, &[0x3f80_0000]), [1.0]);
    assert_eq!(values(Scalar::I32, &[u32::MAX]), [-1.0]);
    assert_eq!(values(Scalar::I64, &[u32::MAX, u32::MAX]), [-1.0]);
    assert_eq!(values(Scalar::U64, &[0, 1]), [4294967296.0]);
    assert_eq!(values(Scalar::F64, &[0, 0x3ff0_0000]), [1.0]);
    assert_eq!(values(Scalar::Bool, &[1, 0]), [1.0, 0.0]);
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    for (x, want) in [
        (0.1f32 as f64, "0.10000000149011612"),
        (-0.0, "0"),
        (1.5e-7, "1.5e-7"),
        (1e21, "1e+21"),
        (123456.0, "123456"),
        (f64::NAN, "NaN"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        assert_eq!(js_string(x), want);
    }
    for (x, d, want) in [
        (0.125, 2, "0.13"),
        (-0.125, 2, "-0.13"),
        (2.5, 0, "3"),
        (9.995, 2, "9.99"), // 9.995 is below the half in binary
        (99.95, 1, "100.0"),
        (0.9995, 3, "1.000"),
        (0.5134, 3, "0.513"),
        (f64::INFINITY, 3, "Infinity"),
    ] {
        assert_eq!(to_fixed(x, d), want, "{x}.toFixed({d})");
    }
}
