//! `certify`: the bounds certificate (§8.5) of WHG1 graphs.

use crate::bounds::certificate::{self, Certified};
use crate::canon;
use crate::whg1::load;
use sha2::{Digest, Sha256};

/// One graph to certify: its role and its bytes.
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The certificate's bytes (canonical JSON, no final newline), or the first graph's refusal as
/// `(index, message)`.
pub fn certify(
    graphs: &[Input],
    capability: Option<&str>,
    lowering: &str,
    set_sha256: Option<&str>,
) -> Result<String, (usize, String)> {
    let mut checked = Vec::with_capacity(graphs.len());
    for (i, g) in graphs.iter().enumerate() {
        if !canon::printable(&g.name) {
            return Err((i, "the graph's role is not printable ASCII".into()));
        }
        match load::check(&g.bytes) {
            Ok(c) => checked.push(c),
            Err(code) => return Err((i, format!("refused at load: {}", code.name()))),
        }
    }
    let certified: Vec<Certified> = graphs
        .iter()
        .zip(&checked)
        .map(|(g, c)| Certified {
            name: g.name.clone(),
            sha256_hex: hex::encode(Sha256::digest(&g.bytes)),
            graph: &c.graph,
            pass: &c.pass,
        })
        .collect();
    let j = certificate::certificate(&certified, capability, lowering, set_sha256);
    canon::write(&j).map_err(|e| (0, e))
}
