//! Resource ids: `type[agent,attribute=value]`, the reference's format (spec export §2.2), with
//! escaping. The reference pastes the agent and value in as they are, so an agent with `,` or a
//! value with `]` gives an id that cannot be parsed back. Here `\`, `,`, `=`, `[` and `]` inside
//! the agent, attribute and value are written as `\,` and so on; ids without those characters are
//! exactly the reference's.

use std::fmt;

/// The parts of a resource id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceId {
    /// The resource type: the entity that declares the id (`std::testing::NullResource`).
    pub entity_type: String,
    pub agent: String,
    /// `name=value` pairs: one for a declared id, one per index attribute otherwise.
    pub key: Vec<(String, String)>,
}

/// The characters that structure an id and are escaped inside its parts.
const SPECIAL: [char; 5] = ['\\', ',', '=', '[', ']'];

impl ResourceId {
    /// Parses an id written by [`fmt::Display`], with or without a `,v=N` version suffix.
    pub fn parse(text: &str) -> Option<ResourceId> {
        let open = text.find('[')?;
        let entity_type = &text[..open];
        if entity_type.is_empty() || entity_type.contains(SPECIAL) {
            return None;
        }
        let mut parts = split_unescaped(&text[open + 1..])?;
        if parts.len() < 2 {
            return None;
        }
        let agent = unescape(&parts.remove(0));
        let key = parts
            .iter()
            .map(|part| {
                let at = find_unescaped(part, '=')?;
                Some((unescape(&part[..at]), unescape(&part[at + 1..])))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ResourceId { entity_type: entity_type.to_owned(), agent, key })
    }
}

impl ResourceId {
    /// The id as text, `type[agent,attribute=value]` (as `Display` writes it, without the
    /// formatting machinery: refinement writes one per resource).
    pub fn text(&self) -> String {
        let length = self.key.iter().map(|(n, v)| n.len() + v.len() + 2).sum::<usize>();
        let mut out = String::with_capacity(self.entity_type.len() + self.agent.len() + length + 2);
        out.push_str(&self.entity_type);
        out.push('[');
        push_escaped(&mut out, &self.agent);
        for (name, value) in &self.key {
            out.push(',');
            push_escaped(&mut out, name);
            out.push('=');
            push_escaped(&mut out, value);
        }
        out.push(']');
        out
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// `a,b` → `a\,b`: a part of an id with its special characters escaped.
pub fn escape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    push_escaped(&mut out, part);
    out
}

fn push_escaped(out: &mut String, part: &str) {
    if !part.contains(SPECIAL) {
        out.push_str(part);
        return;
    }
    for c in part.chars() {
        if SPECIAL.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
}

fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

fn find_unescaped(text: &str, wanted: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == wanted => return Some(at),
            _ => {}
        }
    }
    None
}

/// Splits `agent,a=1,b=2]` (optionally followed by `,v=N`) at unescaped commas, up to the
/// closing bracket.
fn split_unescaped(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push(c);
                current.push(chars.next()?);
            }
            ',' => parts.push(std::mem::take(&mut current)),
            ']' => {
                parts.push(current);
                let rest: String = chars.collect();
                let version_ok = rest.is_empty()
                    || rest.strip_prefix(",v=").is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
                return version_ok.then_some(parts);
            }
            '[' | '=' if current.is_empty() && parts.is_empty() => return None,
            c => current.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(agent: &str, key: &[(&str, &str)]) -> ResourceId {
        ResourceId {
            entity_type: "std::testing::NullResource".into(),
            agent: agent.into(),
            key: key.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(),
        }
    }

    #[test]
    fn plain_ids_are_the_references() {
        let plain = id("agent1", &[("name", "a")]);
        assert_eq!(plain.to_string(), "std::testing::NullResource[agent1,name=a]");
        assert_eq!(ResourceId::parse("std::testing::NullResource[agent1,name=a],v=3"), Some(plain));
    }

    #[test]
    fn special_characters_are_escaped_and_parse_back() {
        let tricky = id("a,g", &[("name", "x]=y\\z"), ("network.id", "7")]);
        let text = tricky.to_string();
        assert_eq!(text, r"std::testing::NullResource[a\,g,name=x\]\=y\\z,network.id=7]");
        assert_eq!(ResourceId::parse(&text), Some(tricky));
    }

    #[test]
    fn malformed_ids_do_not_parse() {
        for text in ["", "T", "T[a]", "T[a,b]", "[a,b=c]", "T[a,b=c", "T[a,b=c]x", "T[a,b=c],v=", "T[a,b=c],v=x"] {
            assert_eq!(ResourceId::parse(text), None, "{text}");
        }
    }
}
