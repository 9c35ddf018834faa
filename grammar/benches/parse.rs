//! Parse throughput: the real-world corpus (when `../shared` is present) and a generated model
//! shaped like a service catalogue. Run with `cargo bench -p modelc-syntax`; divan reports
//! bytes per second for each.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use divan::counter::BytesCount;
use modelc_diagnostics::FileId;

fn main() {
    divan::main();
}

/// Every corpus file, concatenated per file in sorted order.
fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/inmanta-modules");
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(path);
        }
    }
}

/// A generated catalogue: `networks` networks with five hosts each, entities, relations,
/// implementations with loops and conditionals, and string interpolation.
pub fn catalogue(networks: usize) -> String {
    let mut text = String::from(
        "import std\n\nentity Network:\n    \"\"\"A network.\"\"\"\n    string name\n    int vlan = 1\nend\n\
         entity Host:\n    string name\n    string[] tags = []\n    dict labels = {}\nend\n\
         Network.hosts [0:] -- Host.network [1]\nindex Network(name)\nindex Host(network, name)\n\
         implementation describe for Host:\n    if self.name == \"h0\":\n        self.tags += [\"first\"]\n    end\n    \
         std::print(\"{{ self.name }} in {{ self.network.name }}\")\nend\nimplement Host using describe\n\
         implement Network using std::none\n\n",
    );
    for n in 0..networks {
        text.push_str(&format!("net{n} = Network(name=\"net-{n}\", vlan={})\n", 100 + n % 4000));
        text.push_str(&format!("for i in std::sequence(5):\n    Host(name=f\"h{{i}}\", network=net{n}, labels={{\"zone\": \"z{}\"}})\nend\n", n % 7));
    }
    text
}

#[divan::bench]
fn corpus_files(bencher: divan::Bencher<'_, '_>) {
    let files = corpus();
    let bytes: usize = files.iter().map(String::len).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for text in &files {
            divan::black_box(modelc_syntax::parse(FileId(0), text));
        }
    });
}

#[divan::bench(args = [1_000, 10_000])]
fn generated_catalogue(bencher: divan::Bencher<'_, '_>, networks: usize) {
    let text = catalogue(networks);
    assert!(modelc_syntax::parse(FileId(0), &text).diagnostics.is_empty(), "the generated model must be valid");
    bencher.counter(BytesCount::new(text.len())).bench(|| divan::black_box(modelc_syntax::parse(FileId(0), &text)));
}
