//! Small models generated from a fixed seed, for comparing modelc with the reference compiler
//! on cases nobody wrote by hand (`tests/parity/`). Each model exercises one area (expressions
//! and their printed values, f-string formats, casts, entities with defaults, relations and
//! indexes, implementations with conditions and loops) with values drawn at random; most are
//! valid, some are not on purpose (a wrong type, an index collision, a double set). The same
//! seed always gives the same models: the reference's results for them are recorded once
//! (`scripts/record-parity`) and compared in CI.

/// A deterministic random source: the fuzzer's SplitMix64, same sequence everywhere.
pub struct Rng(modelc_fuzz::rng::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(modelc_fuzz::rng::Rng::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// Writes one model of a kind.
type Generator = fn(&mut Rng) -> String;

/// How many models are recorded and compared.
pub const COUNT: usize = 240;

/// The generated models: `(name, source)`, `count` of them, the same for the same count.
pub fn models(count: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(0x6d6f_6465_6c63);
    let kinds: [(&str, Generator); 6] = [
        ("expressions", expressions),
        ("formats", formats),
        ("casts", casts),
        ("entities", entities),
        ("relations", relations),
        ("implementations", implementations),
    ];
    (0..count)
        .map(|n| {
            let (kind, generate) = kinds[n % kinds.len()];
            (format!("generated/{kind}-{n:03}"), generate(&mut rng))
        })
        .collect()
}

fn int_literal(rng: &mut Rng) -> String {
    rng.int(-20, 40).to_string()
}

fn float_literal(rng: &mut Rng) -> String {
    let whole = rng.chance(50);
    let value = rng.int(-10, 30) as f64 + if whole { 0.0 } else { *rng.pick(&[0.5, 0.25, 0.75, 0.1]) };
    format!("{value:?}")
}

fn string_literal(rng: &mut Rng) -> String {
    format!("\"{}\"", rng.pick(&["a", "web", "db-1", "x y", "", "Zed", "10", "1.5", "true"]))
}

/// The value types expressions are generated for.
#[derive(Clone, Copy, PartialEq)]
enum Ty {
    Int,
    Float,
    Str,
    Bool,
    List,
}

const ALL_TYPES: [Ty; 5] = [Ty::Int, Ty::Float, Ty::Str, Ty::Bool, Ty::List];

fn literal(rng: &mut Rng, ty: Ty) -> String {
    match ty {
        Ty::Int => int_literal(rng),
        Ty::Float => float_literal(rng),
        Ty::Str => string_literal(rng),
        Ty::Bool => rng.pick(&["true", "false"]).to_string(),
        Ty::List => {
            let second = *rng.pick(&[Ty::Int, Ty::Str]);
            format!("[{}, {}]", int_literal(rng), literal(rng, second))
        }
    }
}

/// An expression of type `ty` (now and then with an operand of another type, which the
/// reference either converts or rejects).
fn expression(rng: &mut Rng, depth: usize, ty: Ty) -> String {
    if depth == 0 || rng.chance(25) {
        return literal(rng, ty);
    }
    let operand = |rng: &mut Rng, want: Ty| {
        let want = if rng.chance(3) { *rng.pick(&ALL_TYPES) } else { want };
        expression(rng, depth - 1, want)
    };
    match ty {
        Ty::Int | Ty::Float => {
            let (a, b) = (operand(rng, ty), operand(rng, ty));
            match rng.below(7) {
                0 => format!("({a} + {b})"),
                1 => format!("({a} - {b})"),
                2 => format!("({a} * {b})"),
                3 => format!("({a} / {})", rng.pick(&["2", "4", "0.5", "3"])),
                4 => format!("({a} % {})", rng.pick(&["3", "7"])),
                5 => format!("({a} ** {})", rng.pick(&["2", "0", "3"])),
                _ => format!("({} ? {a} : {b})", operand(rng, Ty::Bool)),
            }
        }
        Ty::Str => {
            let (a, b) = (operand(rng, Ty::Str), operand(rng, Ty::Str));
            match rng.below(3) {
                0 => format!("({a} + {b})"),
                1 => format!("({} ? {a} : {b})", operand(rng, Ty::Bool)),
                _ => format!("\"<{{{{ {} }}}}>\"", rng.pick(&["x0", "1"])),
            }
        }
        Ty::Bool => {
            let kind = *rng.pick(&[Ty::Int, Ty::Float, Ty::Str]);
            let (a, b) = (operand(rng, kind), operand(rng, kind));
            match rng.below(7) {
                0 => format!("({a} == {b})"),
                1 => format!("({a} != {b})"),
                2 => format!("({a} < {b})"),
                3 => format!("({a} >= {b})"),
                4 => format!("({} and {})", operand(rng, Ty::Bool), operand(rng, Ty::Bool)),
                5 => format!("(not {})", operand(rng, Ty::Bool)),
                _ => format!("({a} in [{b}, {}])", literal(rng, kind)),
            }
        }
        Ty::List => {
            let (a, b) = (operand(rng, Ty::List), operand(rng, Ty::List));
            match rng.below(3) {
                0 => format!("({a} + {b})"),
                1 => format!("[v for v in {a} if v != {}]", int_literal(rng)),
                _ => format!("std::flatten([{a}, {b}])"),
            }
        }
    }
}

/// Variables bound to random expressions (some of them ill-typed), each printed.
fn expressions(rng: &mut Rng) -> String {
    let mut out = String::new();
    for i in 0..rng.int(2, 4) {
        let ty = *rng.pick(&ALL_TYPES);
        out.push_str(&format!("x{i} = {}\n", expression(rng, 2, ty)));
        out.push_str(&format!("std::print(x{i})\n"));
    }
    out
}

/// Values printed through f-string formats and `{{ }}` interpolation.
fn formats(rng: &mut Rng) -> String {
    let mut out = String::new();
    let common = ["", ":>6", ":<6", ":^7", "!r", "!s", ":*^9"];
    let numeric = [":05d", ":.2f", ":d", ":x", ":+d", ":,", ":e", ":>8.3f", ":.1%"];
    for i in 0..rng.int(2, 4) {
        let (value, is_number) = match rng.below(3) {
            0 => (int_literal(rng), true),
            1 => (float_literal(rng), true),
            _ => (string_literal(rng), false),
        };
        out.push_str(&format!("v{i} = {value}\n"));
        // Mostly specs that suit the value; now and then one that does not.
        let spec = if is_number && rng.chance(60) || !is_number && rng.chance(8) {
            rng.pick(&numeric)
        } else {
            rng.pick(&common)
        };
        out.push_str(&format!("std::print(f\"[{{v{i}{spec}}}]\")\n"));
        if rng.chance(40) {
            out.push_str(&format!("std::print(\"<{{{{ v{i} }}}}>\")\n"));
        }
    }
    out
}

/// Casts of random literals, as Python does them.
fn casts(rng: &mut Rng) -> String {
    let numeric = ["\"12\"", "\"-3\"", "\"1_000\"", "\" 7 \"", "3.0", "3.7", "-2.5", "true", "false", "0", "\"+4\""];
    let floats = ["\"2.5\"", "\"1e3\"", "\"1_0.5\"", "\"-0.0\"", "\"inf\""];
    let any = ["\"abc\"", "\"\"", "null", "\"True\"", "[]", "[1]", "\"1__0\"", "\"0x10\""];
    let mut out = String::new();
    for i in 0..rng.int(2, 4) {
        let cast = *rng.pick(&["int", "float", "string", "bool", "number"]);
        let input = match rng.below(10) {
            0 | 1 => rng.pick(&any),
            2 | 3 if cast != "int" => rng.pick(&floats),
            _ => rng.pick(&numeric),
        };
        out.push_str(&format!("c{i} = {cast}({input})\n"));
        out.push_str(&format!("std::print(c{i})\n"));
    }
    out
}

const TYPES: [(&str, &[&str]); 5] = [
    ("int", &["0", "1", "-4", "12"]),
    ("float", &["0.0", "1.5", "2.0", "-3.25"]),
    ("string", &["\"\"", "\"a\"", "\"host-1\""]),
    ("bool", &["true", "false"]),
    ("string[]", &["[]", "[\"a\", \"b\"]"]),
];

/// An entity with typed attributes and defaults, constructed with some of them given (now
/// and then with a value of the wrong type), each attribute printed.
fn entities(rng: &mut Rng) -> String {
    let count = rng.int(2, 4) as usize;
    let mut out = String::from("entity Item:\n");
    let mut attributes = Vec::new();
    for i in 0..count {
        let (ty, values) = *rng.pick(&TYPES);
        let nullable = rng.chance(20);
        let default = if rng.chance(60) {
            Some(if nullable && rng.chance(30) { "null".to_owned() } else { rng.pick(values).to_string() })
        } else {
            None
        };
        let name = format!("a{i}");
        out.push_str(&format!(
            "  {ty}{} {name}{}\n",
            if nullable { "?" } else { "" },
            default.as_ref().map(|d| format!(" = {d}")).unwrap_or_default()
        ));
        attributes.push((name, ty, values, default.is_some() || nullable));
    }
    out.push_str("end\nimplement Item using std::none\n");
    let mut given = Vec::new();
    for (name, _, values, optional) in &attributes {
        if !optional || rng.chance(50) {
            let value = if rng.chance(8) {
                // A value of another type now and then: an error, or a conversion.
                let (_, others) = *rng.pick(&TYPES);
                rng.pick(others).to_string()
            } else {
                rng.pick(values).to_string()
            };
            given.push(format!("{name}={value}"));
        }
    }
    out.push_str(&format!("item = Item({})\n", given.join(", ")));
    for (name, ..) in &attributes {
        out.push_str(&format!("std::print(item.{name})\n"));
    }
    out
}

/// Two entities with a relation of random multiplicities, an index, and objects connected at
/// random (sometimes more than the upper bound allows, or an index key twice).
fn relations(rng: &mut Rng) -> String {
    let bounds = ["[0:1]", "[1]", "[0:]", "[0:]", "[0:]", "[1:]", "[0:2]", "[0:]", "[2:3]"];
    let (left, right) = (*rng.pick(&bounds), *rng.pick(&bounds));
    let mut out = String::from("entity P:\n  string name\nend\nentity Q:\n  int n\nend\n");
    out.push_str(&format!("P.qs {right} -- Q.ps {left}\n"));
    out.push_str("index P(name)\nimplement P using std::none\nimplement Q using std::none\n");
    let ps = rng.int(1, 3);
    let qs = rng.int(1, 4);
    for q in 0..qs {
        out.push_str(&format!("q{q} = Q(n={})\n", rng.int(0, 2)));
    }
    for p in 0..ps {
        let name = if rng.chance(10) { "p0".to_owned() } else { format!("p{p}") };
        let linked: Vec<String> = (0..qs).filter(|_| rng.chance(50)).map(|q| format!("q{q}")).collect();
        out.push_str(&format!("p{p} = P(name=\"{name}\", qs=[{}])\n", linked.join(", ")));
    }
    for p in 0..ps {
        out.push_str(&format!("std::print(std::count(p{p}.qs))\n"));
    }
    out.push_str("std::print(std::count([q for q in [");
    out.push_str(&(0..qs).map(|q| format!("q{q}")).collect::<Vec<_>>().join(", "));
    out.push_str("] if q.n > 0]))\n");
    out
}

/// An implementation chosen by a condition, with a loop, a comprehension and a string built
/// from the instance.
fn implementations(rng: &mut Rng) -> String {
    let threshold = rng.int(0, 5);
    // Now and then a default that an implementation then sets again: a double set.
    let label_default = if rng.chance(10) { " = \"\"" } else { "" };
    let mut out = format!(
        "entity Host:\n  string name\n  int size\n  string label{label_default}\n  int[] sizes\nend\n\
         Host.peers [0:] -- Host\n"
    );
    out.push_str(&format!(
        "implementation big for Host:\n  self.label = \"big {{{{ name }}}}\"\n  self.sizes = [p.size for p in self.peers if p.size > {}]\nend\n",
        rng.int(0, 4)
    ));
    out.push_str("implementation small for Host:\n  self.label = f\"small {self.name}\"\n  self.sizes = []\nend\n");
    out.push_str(&format!("implement Host using big when self.size > {threshold}\n"));
    out.push_str(&format!("implement Host using small when self.size <= {threshold}\n"));
    let hosts = rng.int(2, 4);
    for h in 0..hosts {
        out.push_str(&format!("h{h} = Host(name=\"h{h}\", size={})\n", rng.int(0, 8)));
    }
    for h in 0..hosts {
        let peers: Vec<String> = (0..hosts).filter(|p| *p != h && rng.chance(50)).map(|p| format!("h{p}")).collect();
        if !peers.is_empty() {
            out.push_str(&format!("h{h}.peers = [{}]\n", peers.join(", ")));
        }
    }
    out.push_str(&format!("for h in [{}]:\n", (0..hosts).map(|h| format!("h{h}")).collect::<Vec<_>>().join(", ")));
    out.push_str("  std::print(f\"{h.name} {h.label} {h.sizes}\")\nend\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_models() {
        assert_eq!(models(30), models(30));
        let names: std::collections::HashSet<String> = models(240).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), 240);
    }
}
