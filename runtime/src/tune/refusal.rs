//! The error of a tune in which no configuration could run: one line per
//! distinct reason, naming the configurations it refused, so that a kernel
//! refused at every workgroup size for the same reason says so once.

use super::{Candidate, Outcome, Trial};

/// `no configuration of `name` could run here ...`, from the skipped
/// `trials` (every trial was skipped).
pub(super) fn none_could_run(name: &str, trials: &[Trial]) -> String {
    // Distinct reasons in the order first seen, each with its candidates.
    let mut reasons: Vec<(&str, Vec<&Candidate>)> = Vec::new();
    for t in trials {
        let why = match &t.outcome {
            Outcome::Skipped(w) => w.as_str(),
            Outcome::Timed { .. } => continue,
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, c)) => c.push(&t.candidate),
            None => reasons.push((why, vec![&t.candidate])),
        }
    }
    let lines: Vec<String> = reasons
        .iter()
        .map(|(why, cands)| format!("\n  - {}: {why}", configurations(cands)))
        .collect();
    format!(
        "no configuration of `{name}` could run here, so none can be chosen:{}",
        lines.concat()
    )
}

/// `R=1 (workgroups 256, 64), R=2 (workgroup 32)`: the candidates by
/// `@autotune` configuration, in order.
fn configurations(cands: &[&Candidate]) -> String {
    // Each configuration's values, and the workgroup sizes refused with it.
    type Group<'a> = (&'a [(String, i64)], Vec<u32>);
    let mut groups: Vec<Group> = Vec::new();
    for c in cands {
        let at = groups
            .iter()
            .position(|(config, _)| *config == &c.config[..]);
        let i = at.unwrap_or_else(|| {
            groups.push((&c.config, Vec::new()));
            groups.len() - 1
        });
        groups[i].1.extend(c.workgroup_size);
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(config, sizes)| {
            let name = Candidate {
                config: config.to_vec(),
                workgroup_size: None,
            }
            .describe();
            match sizes.len() {
                0 => name,
                1 => format!("{name} (workgroup {})", sizes[0]),
                _ => {
                    let s: Vec<String> = sizes.iter().map(u32::to_string).collect();
                    format!("{name} (workgroups {})", s.join(", "))
                }
            }
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(r: i64, w: u32, why: &str) -> Trial {
        Trial {
            candidate: Candidate {
                config: vec![("R".to_string(), r)],
                workgroup_size: Some(w),
            },
            outcome: Outcome::Skipped(why.to_string()),
        }
    }

    #[test]
    fn one_line_per_reason_naming_its_configurations() {
        let trials = [
            skipped(1, 256, "needs 32780 bytes"),
            skipped(1, 64, "needs 32780 bytes"),
            skipped(2, 256, "needs 65560 bytes"),
            skipped(2, 64, "needs 65560 bytes"),
            skipped(4, 32, "needs 65560 bytes"),
        ];
        assert_eq!(
            none_could_run("k", &trials),
            "no configuration of `k` could run here, so none can be chosen:\n  \
             - R=1 (workgroups 256, 64): needs 32780 bytes\n  \
             - R=2 (workgroups 256, 64), R=4 (workgroup 32): needs 65560 bytes"
        );
    }
}
