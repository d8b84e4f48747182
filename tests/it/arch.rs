//! The architecture's one mechanical rule (ARCHITECTURE.md): no import cycle between the
//! crate's top-level modules. An edge A → B is any non-comment mention of `crate::B` (or
//! `use crate::{B, …}`) in A's non-test code; the graph must be acyclic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let top = rel
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            if top == "main" || top == "lib" || !rel.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("\n#[cfg(test)]").next().unwrap();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                let mut rest = line;
                while let Some(i) = rest.find("crate::") {
                    rest = &rest[i + 7..];
                    let names: Vec<&str> = match rest.strip_prefix('{') {
                        Some(list) => list
                            .split('}')
                            .next()
                            .unwrap()
                            .split(',')
                            .map(|n| n.trim().split("::").next().unwrap().trim())
                            .collect(),
                        None => vec![
                            rest.split(|c: char| !c.is_alphanumeric() && c != '_')
                                .next()
                                .unwrap(),
                        ],
                    };
                    for n in names.into_iter().filter(|n| !n.is_empty() && *n != top) {
                        out.entry(top.clone()).or_default().insert(n.to_string());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let g = edges();
    assert!(g.len() >= 15, "the walk found the modules: {g:?}");
    // Depth-first search with colours; a grey node reached again closes a cycle.
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match colour.get(n) {
            Some(2) => return None,
            Some(1) => {
                let at = path.iter().position(|p| *p == n).unwrap();
                let mut cycle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        colour.insert(n, 1);
        path.push(n);
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, colour, path) {
                return Some(c);
            }
        }
        path.pop();
        colour.insert(n, 2);
        None
    }
    let mut colour = BTreeMap::new();
    for n in g.keys() {
        if let Some(cycle) = visit(n, &g, &mut colour, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}
