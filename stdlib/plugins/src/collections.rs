//! The list and dict plugins: `at`, `item`, `count`, `len`, `unique`, `flatten`, `sequence`,
//! `key_sort`, `select`, `filter`, `dict_get`, `contains`, and the small value helpers
//! `inlineif`, `isset`, `invert`, `is_unknown`.

use std::cmp::Ordering;
use std::collections::HashSet;

use modelc_value::{InstanceId, Value, py_str_repr};

use super::args::py_index;
use super::bind::BoundArgs;
use super::context::PluginContext;
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

/// The longest list `sequence` builds; Python's limit is the memory.
pub(crate) const MAX_SEQUENCE: i64 = 10_000_000;

fn index_error() -> PluginError {
    PluginError::external("IndexError", "list index out of range")
}

fn size(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `objects[index]`, negative indexes from the end.
pub(crate) fn at(args: &BoundArgs) -> Result<Value> {
    let objects = args.list_arg("objects")?;
    let i = py_index(args.int_arg("index")?, objects.len()).ok_or_else(index_error)?;
    Ok(objects[i].clone())
}

/// `[o[index] for o in objects]`: the elements must be lists (or strings).
pub(crate) fn item(args: &BoundArgs) -> Result<Value> {
    let objects = args.list_arg("objects")?;
    let index = args.int_arg("index")?;
    let mut out = Vec::with_capacity(objects.len());
    for o in objects {
        out.push(subscript_int(o, index)?);
    }
    Ok(Value::list(out))
}

/// `o[index]` for an integer index, as Python does it.
fn subscript_int(o: &Value, index: i64) -> Result<Value> {
    match o {
        Value::List(items) => py_index(index, items.len()).map(|i| items[i].clone()).ok_or_else(index_error),
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            py_index(index, chars.len())
                .map(|i| Value::from(chars[i].to_string()))
                .ok_or_else(|| PluginError::external("IndexError", "string index out of range"))
        }
        Value::Dict(_) => Err(PluginError::external("KeyError", index.to_string())),
        other => {
            Err(PluginError::external("TypeError", format!("'{}' object is not subscriptable", other.type_name())))
        }
    }
}

/// The number of elements, unknowns included.
pub(crate) fn count(args: &BoundArgs) -> Result<Value> {
    Ok(size(args.list_arg("item_list")?.len()))
}

/// The number of elements, or unknown when an element is unknown.
pub(crate) fn len(args: &BoundArgs) -> Result<Value> {
    let items = args.list_arg("item_list")?;
    if items.iter().any(Value::is_unknown) {
        return Ok(Value::Unknown);
    }
    Ok(size(items.len()))
}

/// Whether all elements are distinct, as `len(set(items)) == len(items)` decides: `1`, `1.0`
/// and `true` are the same element; lists and dicts are unhashable. Unknowns are all distinct.
pub(crate) fn unique(args: &BoundArgs) -> Result<Value> {
    let items = args.list_arg("item_list")?;
    let mut seen = HashSet::new();
    let mut all_distinct = true;
    for (position, v) in items.iter().enumerate() {
        let key = match v {
            Value::Null => HashKey::Null,
            Value::Bool(b) => HashKey::Int(i64::from(*b)),
            Value::Int(i) => HashKey::Int(*i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => HashKey::Int(*f as i64),
            // NaN is never equal to itself, so each one is distinct.
            Value::Float(f) if f.is_nan() => HashKey::Distinct(position),
            Value::Float(f) => HashKey::Float(f.to_bits()),
            Value::Str(s) => HashKey::Str(s.to_string()),
            Value::Instance(id) => HashKey::Instance(*id),
            Value::Unknown => HashKey::Distinct(position),
            Value::List(_) | Value::Dict(_) => {
                return Err(PluginError::external("TypeError", format!("unhashable type: '{}'", v.type_name())));
            }
        };
        all_distinct &= seen.insert(key);
    }
    Ok(Value::Bool(all_distinct))
}

#[derive(PartialEq, Eq, Hash)]
enum HashKey {
    Null,
    Int(i64),
    Float(u64),
    Str(String),
    Instance(InstanceId),
    Distinct(usize),
}

/// Concatenates the elements, which must be iterable: lists (their elements), strings (their
/// characters) or dicts (their keys). One level only.
pub(crate) fn flatten(args: &BoundArgs) -> Result<Value> {
    let mut out = Vec::new();
    for v in args.list_arg("item_list")? {
        match v {
            Value::List(items) => out.extend(items.iter().cloned()),
            Value::Str(s) => out.extend(s.chars().map(|c| Value::from(c.to_string()))),
            Value::Dict(d) => out.extend(d.keys().map(|k| Value::from(k.as_str()))),
            other => {
                return Err(PluginError::external(
                    "TypeError",
                    format!("'{}' object is not iterable", other.type_name()),
                ));
            }
        }
    }
    Ok(Value::list(out))
}

/// `list(range(start, start + i))`.
pub(crate) fn sequence(args: &BoundArgs) -> Result<Value> {
    let i = args.int_arg("i")?;
    let start = args.int_arg("start")?;
    if i <= 0 {
        return Ok(Value::list(Vec::new()));
    }
    if i > MAX_SEQUENCE {
        return Err(PluginError::external("MemoryError", format!("sequence of {i} elements is too long")));
    }
    let end = start
        .checked_add(i)
        .ok_or_else(|| PluginError::external("OverflowError", "integer out of range (integers are 64-bit)"))?;
    Ok(Value::list((start..end).map(Value::Int).collect()))
}

/// Sorts instances by an attribute, or by a list of attributes compared in turn (the
/// reference's tuple form). The sort is stable.
pub(crate) fn key_sort(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let items = args.list_arg("items")?;
    let names: Vec<&str> = match args.value("key")? {
        Value::Str(s) => vec![s],
        Value::List(l) => l.iter().map(|k| k.as_str().ok_or_else(|| attribute_name_error(k))).collect::<Result<_>>()?,
        other => return Err(attribute_name_error(other)),
    };
    let single = matches!(args.value("key")?, Value::Str(_));
    let mut keyed = Vec::with_capacity(items.len());
    for item in items {
        let mut key = Vec::with_capacity(names.len());
        for name in &names {
            key.push(python_getattr(item, name, ctx)?);
        }
        let key = if single { key.pop().unwrap_or(Value::Null) } else { Value::list(key) };
        keyed.push((key, item.clone()));
    }
    let sorted = try_merge_sort(keyed, |a, b| a.0.py_cmp(&b.0).ok_or_else(|| a.0.unorderable_message(&b.0)))
        .map_err(|message| PluginError::external("TypeError", message))?;
    Ok(Value::list(sorted.into_iter().map(|(_, v)| v).collect()))
}

fn attribute_name_error(v: &Value) -> PluginError {
    PluginError::external("TypeError", format!("attribute name must be string, not '{}'", v.type_name()))
}

/// `getattr(obj, name)` on a value as a plugin sees it: instances have attributes, nothing else.
pub(crate) fn python_getattr(obj: &Value, name: &str, ctx: &mut dyn PluginContext) -> Result<Value> {
    match obj {
        Value::Instance(id) => Ok(ctx.attribute(*id, name)?),
        other => Err(PluginError::external(
            "AttributeError",
            format!("'{}' object has no attribute '{name}'", other.type_name()),
        )),
    }
}

/// A stable merge sort whose comparison may fail (Python raises on unorderable values); it
/// never panics, whatever the comparison returns.
fn try_merge_sort<T, E>(
    items: Vec<T>,
    cmp: impl Fn(&T, &T) -> std::result::Result<Ordering, E> + Copy,
) -> std::result::Result<Vec<T>, E> {
    if items.len() <= 1 {
        return Ok(items);
    }
    let mut left = items;
    let right = left.split_off(left.len() / 2);
    let left = try_merge_sort(left, cmp)?;
    let right = try_merge_sort(right, cmp)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    while let (Some(a), Some(b)) = (l.peek(), r.peek()) {
        // Take from the right only when strictly smaller: that keeps the sort stable.
        let next = if cmp(b, a)? == Ordering::Less { r.next() } else { l.next() };
        out.extend(next);
    }
    out.extend(l);
    out.extend(r);
    Ok(out)
}

/// `[getattr(o, attr) for o in objects]`.
pub(crate) fn select(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let attr = args.str_arg("attr")?;
    let mut out = Vec::new();
    for o in args.list_arg("objects")? {
        out.push(python_getattr(o, attr, ctx)?);
    }
    Ok(Value::list(out))
}

/// The list without the elements equal to `not_item`.
pub(crate) fn filter(args: &BoundArgs) -> Result<Value> {
    let not_item = args.value("not_item")?;
    Ok(Value::list(args.list_arg("values")?.iter().filter(|v| !v.py_eq(not_item)).cloned().collect()))
}

/// `dct[key]`; a missing key is Python's `KeyError`.
pub(crate) fn dict_get(args: &BoundArgs) -> Result<Value> {
    let key = args.str_arg("key")?;
    args.dict_arg("dct")?.get(key).cloned().ok_or_else(|| PluginError::external("KeyError", py_str_repr(key)))
}

pub(crate) fn contains(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Bool(args.dict_arg("dct")?.contains_key(args.str_arg("key")?)))
}

pub(crate) fn inlineif(args: &BoundArgs) -> Result<Value> {
    let which = if args.bool_arg("conditional")? { "a" } else { "b" };
    Ok(args.value(which)?.clone())
}

pub(crate) fn isset(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Bool(!args.value("value")?.is_null()))
}

pub(crate) fn invert(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Bool(!args.bool_arg("value")?))
}

pub(crate) fn is_unknown(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Bool(args.value("value")?.is_unknown()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_context::TestContext;
    use modelc_value::IndexMap;

    fn ints(v: &[i64]) -> Value {
        Value::list(v.iter().map(|&i| Value::Int(i)).collect())
    }

    fn shown(v: &Value) -> String {
        modelc_value::interpolate(v, &|id| format!("#{}", id.0))
    }

    fn list_of(items: Vec<Value>) -> BoundArgs {
        BoundArgs::new().with("item_list", Value::list(items))
    }

    #[test]
    fn at_and_item_index_like_python() {
        let args = |l: Value, i: i64| BoundArgs::new().with("objects", l).with("index", i);
        assert_eq!(shown(&at(&args(ints(&[5, 6, 7]), 1)).unwrap()), "6");
        assert_eq!(shown(&at(&args(ints(&[5, 6, 7]), -1)).unwrap()), "7");
        assert_eq!(at(&args(ints(&[1]), 5)).unwrap_err().to_string(), "IndexError: list index out of range");
        let nested = Value::list(vec![ints(&[1, 2]), ints(&[3, 4])]);
        assert_eq!(shown(&item(&args(nested.clone(), 0)).unwrap()), "[1, 3]");
        assert_eq!(shown(&item(&args(Value::list(vec![Value::str("ab")]), -1)).unwrap()), "['b']");
        assert_eq!(item(&args(nested, 2)).unwrap_err().to_string(), "IndexError: list index out of range");
        assert_eq!(item(&args(ints(&[1]), 0)).unwrap_err().to_string(), "TypeError: 'int' object is not subscriptable");
    }

    #[test]
    fn count_counts_unknowns_and_len_does_not_know() {
        let l = vec![Value::Unknown, Value::Int(1)];
        assert!(count(&list_of(l.clone())).unwrap().py_eq(&Value::Int(2)));
        assert!(len(&list_of(l)).unwrap().is_unknown());
        assert!(len(&list_of(vec![Value::Int(1), Value::Int(2)])).unwrap().py_eq(&Value::Int(2)));
    }

    #[test]
    fn unique_uses_python_set_equality() {
        let u = |l: Vec<Value>| unique(&list_of(l)).map(|v| matches!(v, Value::Bool(true)));
        assert_eq!(u(vec![Value::Int(1), Value::Int(2), Value::Int(2)]), Ok(false));
        assert_eq!(u(vec![Value::str("a"), Value::str("b")]), Ok(true));
        assert_eq!(u(vec![Value::Int(1), Value::Float(1.0)]), Ok(false));
        assert_eq!(u(vec![Value::Bool(true), Value::Int(1)]), Ok(false));
        assert_eq!(u(vec![Value::Null, Value::Null]), Ok(false));
        assert_eq!(u(vec![Value::Unknown, Value::Unknown]), Ok(true));
        assert_eq!(u(vec![Value::Float(f64::NAN), Value::Float(f64::NAN)]), Ok(true));
        assert_eq!(unique(&list_of(vec![ints(&[1])])).unwrap_err().to_string(), "TypeError: unhashable type: 'list'");
    }

    #[test]
    fn flatten_concatenates_one_level() {
        let l = vec![ints(&[1]), ints(&[2, 3]), Value::list(vec![ints(&[4])])];
        assert_eq!(shown(&flatten(&list_of(l)).unwrap()), "[1, 2, 3, [4]]");
        assert_eq!(shown(&flatten(&list_of(vec![Value::str("ab")])).unwrap()), "['a', 'b']");
        assert_eq!(
            flatten(&list_of(vec![Value::Int(1)])).unwrap_err().to_string(),
            "TypeError: 'int' object is not iterable"
        );
    }

    #[test]
    fn sequence_is_a_range() {
        let seq = |i: i64, start: i64| sequence(&BoundArgs::new().with("i", i).with("start", start));
        assert_eq!(shown(&seq(3, 0).unwrap()), "[0, 1, 2]");
        assert_eq!(shown(&seq(3, 2).unwrap()), "[2, 3, 4]");
        assert_eq!(shown(&seq(-1, 0).unwrap()), "[]");
        assert_eq!(
            seq(2, i64::MAX).unwrap_err().to_string(),
            "OverflowError: integer out of range (integers are 64-bit)"
        );
        assert!(seq(i64::MAX, 0).is_err());
    }

    #[test]
    fn key_sort_sorts_instances_by_attributes() {
        let mut ctx = TestContext::new();
        let linux = ctx.instance("std::OS", &[("name", Value::str("linux")), ("version", Value::Float(1.0))]);
        let bsd = ctx.instance("std::OS", &[("name", Value::str("freebsd")), ("version", Value::Float(2.0))]);
        let mac = ctx.instance("std::OS", &[("name", Value::str("macos")), ("version", Value::Float(1.0))]);
        let items = Value::list(vec![linux.clone(), bsd.clone(), mac.clone()]);
        let sorted = key_sort(&BoundArgs::new().with("items", items.clone()).with("key", "name"), &mut ctx).unwrap();
        let ids: Vec<String> = sorted.as_list().unwrap().iter().map(shown).collect();
        assert_eq!(ids, [shown(&bsd), shown(&linux), shown(&mac)]);
        let by_two = Value::list(vec![Value::str("version"), Value::str("name")]);
        let sorted = key_sort(&BoundArgs::new().with("items", items.clone()).with("key", by_two), &mut ctx).unwrap();
        let ids: Vec<String> = sorted.as_list().unwrap().iter().map(shown).collect();
        assert_eq!(ids, [shown(&linux), shown(&mac), shown(&bsd)]);
        let err = key_sort(&BoundArgs::new().with("items", items).with("key", "nope"), &mut ctx).unwrap_err();
        assert!(matches!(err, PluginError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn key_sort_reports_unorderable_keys() {
        let mut ctx = TestContext::new();
        let a = ctx.instance("__config__::A", &[("k", Value::str("x"))]);
        let b = ctx.instance("__config__::A", &[("k", Value::Int(1))]);
        let err =
            key_sort(&BoundArgs::new().with("items", Value::list(vec![a, b])).with("key", "k"), &mut ctx).unwrap_err();
        assert!(err.to_string().starts_with("TypeError: '<' not supported between instances of"), "{err}");
    }

    #[test]
    fn merge_sort_is_stable() {
        let v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (0, 'e')];
        let sorted = try_merge_sort::<_, ()>(v, |a, b| Ok(a.0.cmp(&b.0))).unwrap();
        assert_eq!(sorted, [(0, 'e'), (1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    }

    #[test]
    fn select_and_filter() {
        let mut ctx = TestContext::new();
        let linux = ctx.instance("std::OS", &[("name", Value::str("linux"))]);
        let unix = ctx.instance("std::OS", &[("name", Value::str("unix"))]);
        let objects = Value::list(vec![linux.clone(), unix.clone()]);
        let names = select(&BoundArgs::new().with("objects", objects.clone()).with("attr", "name"), &mut ctx).unwrap();
        assert_eq!(shown(&names), "['linux', 'unix']");
        let rest = filter(&BoundArgs::new().with("values", objects).with("not_item", unix)).unwrap();
        assert_eq!(shown(&rest), format!("[{}]", shown(&linux)));
        let err = select(&BoundArgs::new().with("objects", ints(&[1])).with("attr", "x"), &mut ctx).unwrap_err();
        assert_eq!(err.to_string(), "AttributeError: 'int' object has no attribute 'x'");
    }

    #[test]
    fn dict_plugins() {
        let d: IndexMap<String, Value> = [("a".to_string(), Value::str("v"))].into();
        let args = |k: &str| BoundArgs::new().with("dct", Value::dict(d.clone())).with("key", k);
        assert_eq!(shown(&dict_get(&args("a")).unwrap()), "v");
        assert_eq!(dict_get(&args("z")).unwrap_err().to_string(), "KeyError: 'z'");
        assert!(matches!(contains(&args("a")), Ok(Value::Bool(true))));
        assert!(matches!(contains(&args("z")), Ok(Value::Bool(false))));
    }

    #[test]
    fn small_helpers() {
        let args = BoundArgs::new().with("conditional", true).with("a", "x").with("b", "y");
        assert_eq!(shown(&inlineif(&args).unwrap()), "x");
        assert!(matches!(isset(&BoundArgs::new().with("value", Value::Null)), Ok(Value::Bool(false))));
        assert!(matches!(isset(&BoundArgs::new().with("value", 0)), Ok(Value::Bool(true))));
        assert!(matches!(invert(&BoundArgs::new().with("value", true)), Ok(Value::Bool(false))));
        assert!(matches!(is_unknown(&BoundArgs::new().with("value", Value::Unknown)), Ok(Value::Bool(true))));
        assert!(matches!(is_unknown(&BoundArgs::new().with("value", 1)), Ok(Value::Bool(false))));
    }
}
