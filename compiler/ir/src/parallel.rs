//! Reading a large resource queue on every core: serde_json's own scanner finds each resource's
//! JSON (checking its syntax, allocating nothing but the text), then the resources are parsed in
//! parallel, in order. A 100,000-network model's queue reads about twice as fast on two cores;
//! an exporting server and `export --ir` spend most of their reading here.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::Resource;

/// Below this many resources, one thread parses them all: starting threads would cost more.
const PARALLEL_FROM: usize = 4096;

/// `#[serde(deserialize_with)]` of [`crate::Ir::resources`].
pub(crate) fn resources<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Resource>, D::Error> {
    let texts: Vec<Box<RawValue>> = Vec::deserialize(deserializer)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if texts.len() < PARALLEL_FROM || threads == 1 {
        return parse(&texts, 0).map_err(D::Error::custom);
    }
    let chunk = texts.len().div_ceil(threads);
    let parts: Vec<Result<Vec<Resource>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = texts
            .chunks(chunk)
            .enumerate()
            .map(|(index, part)| scope.spawn(move || parse(part, index * chunk)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("reading the resources failed".to_owned())))
            .collect()
    });
    let mut resources = Vec::with_capacity(texts.len());
    drop(texts);
    for part in parts {
        resources.extend(part.map_err(D::Error::custom)?);
    }
    Ok(resources)
}

/// Parses `texts`, the first of which is resource number `first` of the queue.
fn parse(texts: &[Box<RawValue>], first: usize) -> Result<Vec<Resource>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            serde_json::from_str(text.get()).map_err(|e| format!("resource {} of the queue: {e}", first + index))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::Ir;

    /// A queue of `n` resources, as JSON.
    fn document(n: usize) -> (Ir, String) {
        let mut ir = crate::tests::sample();
        let template = ir.resources[0].clone();
        ir.resources = (0..n)
            .map(|i| {
                let mut r = template.clone();
                r.id = format!("test::R[internal,name=r{i}]");
                r.attributes.insert("index".to_owned(), serde_json::json!(i));
                r
            })
            .collect();
        ir.sets.clear();
        let text = ir.to_json();
        (ir, text)
    }

    #[test]
    fn a_queue_read_in_parallel_is_the_queue_written_in_order() {
        for n in [0, 1, super::PARALLEL_FROM - 1, super::PARALLEL_FROM * 3 + 7] {
            let (ir, text) = document(n);
            assert_eq!(Ir::from_json(&text).unwrap(), ir, "{n} resources");
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::from_value::<Ir>(value).unwrap(), ir, "{n} resources, from a value");
            assert_eq!(serde_json::from_reader::<_, Ir>(text.as_bytes()).unwrap(), ir, "{n} resources, from a reader");
        }
    }

    #[test]
    fn a_bad_resource_is_named_by_its_place_in_the_queue() {
        let (_, text) = document(super::PARALLEL_FROM * 2);
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["resources"][5000]["send_event"] = serde_json::json!(7);
        let error = Ir::from_json(&value.to_string()).unwrap_err();
        assert!(error.contains("resource 5000 of the queue: invalid type: integer `7`, expected a boolean"), "{error}");
        let syntax = Ir::from_json(&text.replacen("\"index\": 5000", "\"index\": 50 00", 1)).unwrap_err();
        assert!(syntax.contains("not a resource IR document"), "{syntax}");
    }
}
