//! Prints, for each request line on stdin, where its graph's load stops: the load step, or the
//! verdict with its first `acc64` failure (a debugging aid).
//!
//! ```text
//! cargo run -p wai-checker --example why < requests.jsonl
//! ```
use std::io::BufRead;
use wai_checker::bounds::{Profile, certificate};
use wai_checker::whg1::load;
use wai_checker::{plan, whg1};

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("a line");
        let v: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        let bytes = hex::decode(v["graph"].as_str().expect("graph")).expect("hex");
        let id = v["id"].as_str().unwrap_or("?");
        let why = match whg1::read(&bytes) {
            Err(_) => "steps 1-6".to_string(),
            Ok(g) => {
                let ops: Vec<&str> = g.ops.iter().map(|o| o.name()).collect();
                if !plan::channels_plan(&g) {
                    format!("channels {ops:?}")
                } else {
                    match load::check(&bytes) {
                        Err(c) => format!("{} {ops:?}", c.name()),
                        Ok(c) => {
                            let v = certificate::verdict(&[("g", &c.graph, &c.pass)]);
                            match &v.acc64 {
                                Some(f) => format!("acc64 fails at {} {} {:?} {ops:?}", f.place, f.index, f.why),
                                None => format!("ok acc32={} {ops:?}", v.meets(Profile::Acc32)),
                            }
                        }
                    }
                }
            }
        };
        println!("{id}: {why}");
    }
}
