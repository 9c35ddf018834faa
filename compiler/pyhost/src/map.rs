//! The host's `map` message: a batch of instances of one resource class, each sent with the
//! attributes its mappers read, answered with each instance's mapped fields. Both directions are
//! written and read with their own types, not through `serde_json::Value`: a batch is 10,000
//! instances, and building that tree cost more than the mappers themselves.

use indexmap::{IndexMap, IndexSet};
use modelc_exec::{MapAnswer, MapBatch, Mapped};
use modelc_std_plugins::PluginContext;
use modelc_value::{InstanceId, Value};
use serde::de::IgnoredAny;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

use crate::codec::{Decoded, Wire};

/// A `map` request, serialized as one line (with its newline). Each item is
/// `[instance, index in types, value of each attribute in send…]`. How a column's values are
/// written depends on all of them (`columns`), so that the host's loop over 10,000 items does
/// per item only what the column needs:
/// - `plain`: every value is a string, number, bool or null, written as is;
/// - `instance`: every value is an instance, written as its number (`instances` names their
///   entities);
/// - `tagged`: anything else, each value in the protocol's encoding, one that could not be read
///   being `{"$m": 1}` (the mapper asks for it when it reads it, and gets why).
pub(crate) fn request(
    batch: &MapBatch<'_>,
    items: &[InstanceId],
    send: &[String],
    ask_reads: bool,
    context: &mut dyn PluginContext,
) -> Vec<u8> {
    let mut types: IndexSet<String> = IndexSet::new();
    let mut rows = Vec::with_capacity(items.len());
    let mut values = Vec::with_capacity(items.len() * send.len());
    for instance in items {
        let (entity, _) = types.insert_full(context.entity_name(*instance));
        rows.push((instance.0, entity));
        // Values only: a read that gives none is asked when the mapper makes it.
        values.extend(send.iter().map(|name| context.attribute(*instance, name).ok()));
    }
    let width = send.len();
    let columns: Vec<Column> =
        (0..width).map(|column| Column::of(values.iter().skip(column).step_by(width.max(1)))).collect();
    let mut instances: IndexMap<u32, String> = IndexMap::new();
    for (at, value) in values.iter().enumerate() {
        if let (Column::Instance, Some(Value::Instance(id))) = (columns[at % width], value) {
            instances.entry(id.0).or_insert_with(|| context.entity_name(*id));
        }
    }
    let context = &*context;
    let request = Request {
        op: "map",
        module: batch.module,
        entity: batch.entity,
        fields: batch.fields,
        id: batch.id,
        types: types.iter().collect(),
        send,
        columns: &columns,
        instances: instances.iter().collect(),
        items: Items { rows: &rows, values: &values, columns: &columns, context },
        reads: ask_reads,
    };
    crate::process::line(&request)
}

#[derive(Serialize)]
struct Request<'a> {
    op: &'static str,
    module: &'a str,
    entity: &'a str,
    fields: &'a [String],
    id: Option<&'a str>,
    types: Vec<&'a String>,
    send: &'a [String],
    columns: &'a [Column],
    instances: Vec<(&'a u32, &'a String)>,
    items: Items<'a>,
    reads: bool,
}

/// How a sent attribute's values are written, for all items of a batch.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
enum Column {
    Plain,
    Instance,
    Tagged,
}

impl Column {
    fn of<'v>(mut values: impl Iterator<Item = &'v Option<Value>>) -> Column {
        let Some(first) = values.next() else { return Column::Tagged };
        let kind = |value: &Option<Value>| match value {
            Some(Value::Null | Value::Bool(_) | Value::Int(_) | Value::Str(_)) => Column::Plain,
            Some(Value::Float(f)) if f.is_finite() => Column::Plain,
            Some(Value::Instance(_)) => Column::Instance,
            _ => Column::Tagged,
        };
        match kind(first) {
            Column::Plain if values.all(|v| matches!(kind(v), Column::Plain)) => Column::Plain,
            Column::Instance if values.all(|v| matches!(kind(v), Column::Instance)) => Column::Instance,
            _ => Column::Tagged,
        }
    }
}

struct Items<'a> {
    /// Per item: its instance, and its entity's index in `types`.
    rows: &'a [(u32, usize)],
    /// `columns.len()` values per item.
    values: &'a [Option<Value>],
    columns: &'a [Column],
    context: &'a dyn PluginContext,
}

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let width = self.columns.len();
        let mut items = serializer.serialize_seq(Some(self.rows.len()))?;
        for (at, (instance, entity)) in self.rows.iter().enumerate() {
            let values = &self.values[at * width..(at + 1) * width];
            items.serialize_element(&Item { instance: *instance, entity: *entity, values, items: self })?;
        }
        items.end()
    }
}

struct Item<'a> {
    instance: u32,
    entity: usize,
    values: &'a [Option<Value>],
    items: &'a Items<'a>,
}

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut item = serializer.serialize_seq(Some(2 + self.values.len()))?;
        item.serialize_element(&self.instance)?;
        item.serialize_element(&self.entity)?;
        for (value, column) in self.values.iter().zip(self.items.columns) {
            match (value, column) {
                (Some(Value::Instance(id)), Column::Instance) => item.serialize_element(&id.0)?,
                (Some(value), _) => item.serialize_element(&Wire { value, context: self.items.context })?,
                (None, _) => item.serialize_element(&Unread)?,
            }
        }
        item.end()
    }
}

/// An attribute that gave no value when the batch was sent.
struct Unread;

impl Serialize for Unread {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("$m", &1)?;
        map.end()
    }
}

/// One message of the host's answer to a `map`: the parts it sends as it maps (`"op": "part"`)
/// and its final message alike. Per item in order, its mapped values, or `null` when its
/// outcome is in `outcomes` (by position in this message); the files uploaded since the last
/// part; in the final message, which attributes the mappers read (when the request asked), or
/// why the batch failed.
#[derive(Deserialize)]
struct Message {
    values: Option<Vec<Option<Vec<Decoded>>>>,
    #[serde(default)]
    outcomes: Vec<(usize, Outcome)>,
    /// Uploaded files by sha1: their text, `null` for content that is not UTF-8.
    #[serde(default)]
    files: IndexMap<String, Option<String>>,
    #[serde(default)]
    reads: Vec<String>,
    failed: Option<String>,
    detail: Option<String>,
}

/// A batch's answer, gathered from its parts into the `MapAnswer`.
pub(crate) struct Collected<'a> {
    id_mapped: bool,
    answer: &'a mut MapAnswer,
    /// The first part that could not be read: the batch fails with it.
    unreadable: Option<String>,
}

impl<'a> Collected<'a> {
    /// For a batch whose id is mapped or not (then each item's values start with the id's).
    pub(crate) fn new(id_mapped: bool, answer: &'a mut MapAnswer) -> Self {
        Collected { id_mapped, answer, unreadable: None }
    }

    pub(crate) fn add(&mut self, part: &[u8]) {
        if self.unreadable.is_none()
            && let Err((why, _)) = self.read(part)
        {
            self.unreadable = Some(why);
        }
    }

    /// Reads the final message: which attributes the mappers read, or why the batch failed.
    pub(crate) fn finish(mut self, line: &[u8]) -> Result<Vec<String>, (String, Option<String>)> {
        let reads = self.read(line)?;
        match self.unreadable {
            Some(why) => Err((why, None)),
            None => Ok(reads),
        }
    }

    fn read(&mut self, line: &[u8]) -> Result<Vec<String>, (String, Option<String>)> {
        let mut message: Message = serde_json::from_slice(line)
            .map_err(|why| (format!("the plugin host's answer could not be read: {why}"), None))?;
        let Some(values) = message.values.take() else {
            let why = message.failed.take().unwrap_or_else(|| "the plugin host did not answer".to_owned());
            return Err((why, message.detail.take()));
        };
        let mut outcomes = std::mem::take(&mut message.outcomes).into_iter().peekable();
        for (at, item) in values.into_iter().enumerate() {
            let next = match item {
                Some(values) => mapped_values(values, self.id_mapped)?,
                None => match outcomes.next_if(|(item, _)| *item == at) {
                    Some((_, outcome)) => outcome.into_mapped()?,
                    None => return Err((format!("the plugin host gave no outcome for item {at}"), None)),
                },
            };
            self.answer.mapped.push(next);
        }
        self.answer.files.extend(message.files);
        Ok(message.reads)
    }
}

/// What became of an item whose fields were not mapped.
#[derive(Deserialize)]
struct Outcome {
    ignored: Option<IgnoredAny>,
    unknown_id: Option<IgnoredAny>,
    raised: Option<Raised>,
}

#[derive(Deserialize)]
struct Raised {
    field: Option<String>,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    traceback: String,
}

fn mapped_values(values: Vec<Decoded>, id_mapped: bool) -> Result<Mapped, (String, Option<String>)> {
    let mut values = values.into_iter().map(|Decoded(value)| value);
    let id = match id_mapped {
        true => match values.next() {
            Some(Value::Str(id)) => Some(id.to_string()),
            _ => return Err(("the plugin host answered an id that is not a string".to_owned(), None)),
        },
        false => None,
    };
    Ok(Mapped::Values { id, values: values.collect() })
}

impl Outcome {
    fn into_mapped(self) -> Result<Mapped, (String, Option<String>)> {
        if self.ignored.is_some() {
            return Ok(Mapped::Ignored);
        }
        if self.unknown_id.is_some() {
            return Ok(Mapped::UnknownId);
        }
        let raised = self.raised.ok_or(("the plugin host answered an item with no outcome".to_owned(), None))?;
        Ok(Mapped::Raised {
            field: raised.field,
            kind: raised.kind,
            message: raised.message,
            traceback: raised.traceback,
        })
    }
}
