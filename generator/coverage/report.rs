//! The report: every required item with the vectors that cover it (the first three, and how many
//! more), the items no vector covers, the claims that do not hold, and a count of each.

use super::derive::Vector;
use std::collections::BTreeMap;

/// Which vectors cover each item, and the claims that do not hold, as the files are tallied.
#[derive(Default)]
pub struct Report {
    covered: BTreeMap<String, Vec<String>>,
    broken: Vec<String>,
}

impl Report {
    /// `by` (a vector, `file#id`, or a corpus file) covers `item`.
    pub fn cover(&mut self, item: String, by: String) {
        self.covered.entry(item).or_default().push(by);
    }

    /// The vectors of the tree file `target`: the items each covers, and each claim checked. The
    /// claims of a file of one operator's vectors, `op`, name its items without the prefix.
    pub fn file(&mut self, target: &str, op: Option<&str>, vectors: &[Vector]) {
        for v in vectors {
            for item in &v.items {
                self.cover(item.clone(), format!("{target}#{}", v.id));
            }
            for claim in &v.claims {
                let full = match op {
                    Some(op) if !claim.starts_with("graph:") && !claim.starts_with("code:") => {
                        format!("{op}:{claim}")
                    }
                    _ => claim.clone(),
                };
                if !v.items.contains(&full) {
                    self.broken
                        .push(format!("{target}#{}: claims {claim}, which it does not cover", v.id));
                }
            }
        }
    }

    /// Prints every item of `required` with its vectors (with `quiet`, only those with none), the
    /// claims that do not hold, and the counts; fails on an item with no vector or a broken claim.
    pub fn print(&self, required: &[String], quiet: bool) -> Result<(), String> {
        let mut missing = 0;
        for item in required {
            match self.covered.get(item) {
                Some(ids) => {
                    if !quiet {
                        let more = if ids.len() > 3 {
                            format!(" and {} more", ids.len() - 3)
                        } else {
                            String::new()
                        };
                        println!(
                            "{item}: {}{more}",
                            ids.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                        );
                    }
                }
                None => {
                    missing += 1;
                    println!("{item}: NONE");
                }
            }
        }
        for b in &self.broken {
            println!("{b}");
        }
        println!(
            "{} items, {} covered, {missing} with no vector; {} claims that do not hold",
            required.len(),
            required.len() - missing,
            self.broken.len()
        );
        if missing > 0 || !self.broken.is_empty() {
            Err("coverage is incomplete".into())
        } else {
            Ok(())
        }
    }
}
