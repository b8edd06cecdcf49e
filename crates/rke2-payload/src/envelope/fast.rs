//! A fast path for the regular YAML `kubectl` prints, on an object every line of which the
//! splitter's gate found in the kubectl shape ([`super::lines`]): so every line is blank, a
//! comment, block scalar content, or one `key: value`, `key:`, `key: |` or `- scalar` whose
//! quoted scalar closes on its line and whose scalar does not go on below it. What the gate
//! does not check, this does: the structure (keys of a mapping at one column, a sequence's `-`
//! at one column, no key twice), and that a plain scalar holds no `: ` nor a comment. It reads
//! only what this tool needs (`kind`, `type`, `metadata.name`, `.namespace`, `.labels`, `data`,
//! `stringData`) and gives up (returns `None`) on anything else: tabs, keys read elsewhere,
//! values of other types where a string is read. The caller then parses the object with the
//! full YAML parser, so results are the same either way; a differential test holds the two
//! together.

use std::borrow::Cow;

use super::lines;
use super::raw::{OwnerRef, Pairs, RawMeta, RawObject, Str};
use crate::codec::yaml::yaml_printable;

/// Reads one object (a document, or a `List` item already dedented) in the kubectl shape the
/// fast way; one whose collections nest deeper than `max_depth` (counted as the parser counts
/// them, the object's own mapping being 1) is left to the parser, which refuses it.
pub(crate) fn object(text: &str, max_depth: usize) -> Option<RawObject<'_>> {
    if !yaml_printable(text) {
        return None;
    }
    let lines = lines(text)?;
    let mut p = Parser {
        lines,
        at: 0,
        depth: 0,
        max_depth,
    };
    let mut object = RawObject::default();
    p.mapping(0, &mut |p, key, value, indent| {
        match key {
            "kind" => object.kind = Some(Str(Cow::Borrowed(string(value)?))),
            "type" => object.secret_type = Some(Str(Cow::Borrowed(string(value)?))),
            "data" => object.data = Some(p.pairs(value, indent)?),
            "stringData" => object.string_data = Some(p.pairs(value, indent)?),
            "metadata" => object.metadata = Some(p.metadata(value, indent)?),
            // Keys read elsewhere: the full parser decides (a merge key, `<<`, is no key here).
            "items" | "ignition" => return None,
            _ => p.skip(value, indent)?,
        }
        Some(())
    })?;
    (p.at == p.lines.len()).then_some(object)
}

/// (indentation, content) of every line but blank lines and comments (they matter only inside
/// block scalars, which are skipped whole); `None` if a line holds a tab or a lone `\r`.
fn lines(text: &str) -> Option<Vec<(usize, &str)>> {
    let mut out = Vec::with_capacity(text.len() / 32);
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content = line.trim_start_matches(' ');
        if memchr::memchr2(b'\t', b'\r', line.as_bytes()).is_some() {
            return None;
        }
        if !content.is_empty() && !content.starts_with('#') {
            out.push((line.len() - content.len(), content));
        }
    }
    Some(out)
}

/// What follows `key:` on its line.
#[derive(Clone, Copy)]
enum Value<'a> {
    /// Nothing: a nested block (or null).
    Block,
    /// A one-line scalar, raw.
    Inline(&'a str),
    /// A block scalar header (`|`, `>-`, …).
    BlockScalar,
}

struct Parser<'a> {
    lines: Vec<(usize, &'a str)>,
    at: usize,
    /// The collections open at the current line, and the most that may be.
    depth: usize,
    max_depth: usize,
}

type Visit<'f, 'a> = dyn FnMut(&mut Parser<'a>, &'a str, Value<'a>, usize) -> Option<()> + 'f;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<(usize, &'a str)> {
        self.lines.get(self.at).copied()
    }

    /// Reads a collection one level deeper (`None` past the depth limit).
    fn nested(&mut self, read: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        if self.depth >= self.max_depth {
            return None;
        }
        self.depth += 1;
        read(self)?;
        self.depth -= 1;
        Some(())
    }

    /// A block mapping whose keys sit at `indent`; `visit` is called for each key with the
    /// parser positioned after the key's line.
    fn mapping(&mut self, indent: usize, visit: &mut Visit<'_, 'a>) -> Option<()> {
        self.nested(|p| p.mapping_in(indent, visit))
    }

    fn mapping_in(&mut self, indent: usize, visit: &mut Visit<'_, 'a>) -> Option<()> {
        let mut seen: Vec<&str> = Vec::new();
        let mut any = false;
        while let Some((i, content)) = self.peek() {
            if i < indent {
                break;
            }
            if i > indent {
                return None;
            }
            let (key, value) = key_value(content)?;
            if seen.contains(&key) {
                return None;
            }
            seen.push(key);
            self.at += 1;
            visit(self, key, value, indent)?;
            any = true;
        }
        any.then_some(())
    }

    /// Skips (and checks) the value of a key at `indent`.
    fn skip(&mut self, value: Value<'a>, indent: usize) -> Option<()> {
        match value {
            Value::Inline(v) => scalar_ok(v).then_some(()),
            Value::BlockScalar => {
                // Content: every line deeper than the key.
                while self.peek().is_some_and(|(i, _)| i > indent) {
                    self.at += 1;
                }
                Some(())
            }
            Value::Block => match self.peek() {
                // A block sequence may sit at the key's own indentation.
                Some((i, c)) if i == indent && is_item(c) => self.sequence(indent),
                Some((i, c)) if i > indent && is_item(c) => self.sequence(i),
                Some((i, _)) if i > indent => self.mapping(i, &mut |p, _, v, ind| p.skip(v, ind)),
                // `key:` with nothing: null.
                _ => Some(()),
            },
        }
    }

    /// Skips `metadata.annotations`, giving up when it holds a preview's findings or an
    /// ignore-check annotation (both are the full parser's).
    fn skip_annotations(&mut self, value: Value<'a>, indent: usize) -> Option<()> {
        match (value, self.peek()) {
            (Value::Block, Some((i, c))) if i > indent && !is_item(c) => {
                self.mapping(i, &mut |p, key, v, ind| {
                    if key == super::FINDINGS_ANNOTATION
                        || key == super::RENDERED_FROM_ANNOTATION
                        || key.starts_with(crate::checks::IGNORE_CHECK_ANNOTATION_PREFIX)
                    {
                        return None;
                    }
                    p.skip(v, ind)
                })
            }
            _ => self.skip(value, indent),
        }
    }

    /// `metadata.ownerReferences`: a block sequence of mappings, of which `apiVersion` and
    /// `kind` are read (as strings) and the rest checked and skipped.
    fn owners(&mut self, value: Value<'a>, indent: usize) -> Option<Vec<OwnerRef<'a>>> {
        if !matches!(value, Value::Block) {
            return None;
        }
        let at = match self.peek() {
            Some((i, c)) if i >= indent && is_item(c) => i,
            _ => return None,
        };
        let mut out = Vec::new();
        self.nested(|p| {
            while let Some((i, content)) = p.peek() {
                if i != at || !is_item(content) {
                    break;
                }
                let rest = content.get(2..)?;
                key_value(rest)?;
                p.lines[p.at] = (at + 2, rest);
                let mut owner = OwnerRef::default();
                p.mapping(at + 2, &mut |p, key, v, ind| {
                    match key {
                        "apiVersion" => owner.api_version = Some(Str(Cow::Borrowed(string(v)?))),
                        "kind" => owner.kind = Some(Str(Cow::Borrowed(string(v)?))),
                        _ => p.skip(v, ind)?,
                    }
                    Some(())
                })?;
                out.push(owner);
            }
            Some(())
        })?;
        Some(out)
    }

    /// A block sequence whose `- ` sits at `indent`.
    fn sequence(&mut self, indent: usize) -> Option<()> {
        self.nested(|p| p.sequence_in(indent))
    }

    fn sequence_in(&mut self, indent: usize) -> Option<()> {
        while let Some((i, content)) = self.peek() {
            if i != indent || !is_item(content) {
                break;
            }
            // `- ` and something: the item's content starts two columns right of the dash.
            let rest = &content[2..];
            let inner = indent + 2;
            if key_value(rest).is_some() {
                // A mapping item: its first key is on the dash line, the others below.
                self.lines[self.at] = (inner, rest);
                self.mapping(inner, &mut |p, _, v, ind| p.skip(v, ind))?;
            } else {
                scalar_ok(rest).then_some(())?;
                self.at += 1;
            }
        }
        Some(())
    }

    /// A mapping of plain string values (`data`, `labels`) under a key at `indent`.
    fn pairs(&mut self, value: Value<'a>, indent: usize) -> Option<Pairs<'a>> {
        if !matches!(value, Value::Block) {
            return None;
        }
        let child = match self.peek() {
            Some((i, c)) if i > indent && !is_item(c) => i,
            _ => return None,
        };
        let mut out: Vec<(Str<'a>, Str<'a>)> = Vec::new();
        self.mapping(child, &mut |_, key, v, _| {
            out.push((Str(Cow::Borrowed(key)), Str(Cow::Borrowed(string(v)?))));
            Some(())
        })?;
        Some(Pairs(out))
    }

    fn metadata(&mut self, value: Value<'a>, indent: usize) -> Option<RawMeta<'a>> {
        if !matches!(value, Value::Block) {
            return None;
        }
        let child = match self.peek() {
            Some((i, c)) if i > indent && !is_item(c) => i,
            _ => return None,
        };
        let mut meta = RawMeta::default();
        self.mapping(child, &mut |p, key, v, ind| {
            match key {
                "name" => meta.name = Some(Str(Cow::Borrowed(string(v)?))),
                "namespace" => meta.namespace = Some(Str(Cow::Borrowed(string(v)?))),
                "labels" => meta.labels = Some(p.pairs(v, ind)?),
                // A preview's findings are left to the full parser (they are JSON text).
                "annotations" => p.skip_annotations(v, ind)?,
                "ownerReferences" => meta.owner_references = Some(p.owners(v, ind)?),
                _ => p.skip(v, ind)?,
            }
            Some(())
        })?;
        Some(meta)
    }
}

fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// `key: value`, `key:` (a block follows) or `key: |` (a block scalar), as the gate reads a
/// key ([`lines::key_value`]); a block scalar header without an indentation digit.
fn key_value(content: &str) -> Option<(&str, Value<'_>)> {
    let (key, value) = lines::key_value(content.as_bytes())?;
    // Spaces only separate (the line holds no tab): a no-break space starts the value.
    let value = &content[content.len() - value.len()..];
    let value = if value.is_empty() {
        Value::Block
    } else if lines::block_header(value.as_bytes()) == Some(None) {
        Value::BlockScalar
    } else {
        Value::Inline(value)
    };
    Some((&content[..key], value))
}

/// Whether a one-line scalar (of any YAML type) reads as one value: quoted (the gate saw it
/// close at the end of its line), or plain and [`plain_ok`].
fn scalar_ok(v: &str) -> bool {
    v.starts_with(['"', '\'']) || plain_ok(v)
}

/// Whether a plain scalar starts with no indicator, holds no `: ` (an error to the parser) nor
/// ` #` (a comment) and does not end with `:` (a key).
fn plain_ok(v: &str) -> bool {
    !lines::INDICATORS.contains(&v.as_bytes()[0])
        && !v.contains(": ")
        && !v.contains(" #")
        && !v.ends_with(':')
}

/// A value read as a string: plain, and not a null, bool or number in YAML.
fn string(value: Value<'_>) -> Option<&str> {
    let Value::Inline(v) = value else {
        return None;
    };
    if !plain_ok(v) || v != v.trim_end() {
        return None;
    }
    let lower = v.to_ascii_lowercase();
    let special = matches!(
        lower.as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) || v.parse::<f64>().is_ok()
        || v.starts_with(['+', '.'])
        || lower.starts_with("0x")
        || lower.starts_with("0o")
        || lower.starts_with("0b");
    (!special).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::DecodeOptions;

    /// The fast path as the splitter runs it: only on a text whose every line is in the shape.
    fn shaped_object(text: &str) -> Option<RawObject<'_>> {
        lines::in_shape(text.as_bytes())
            .then(|| object(text, DecodeOptions::default().max_depth))
            .flatten()
    }

    #[test]
    fn an_object_nested_past_the_depth_limit_is_left_to_the_parser_which_refuses_it() {
        let secret = "kind: Secret\nmetadata:\n  name: a\n";
        // Mappings, and mappings in sequences, one more level per line.
        let maps = |n: usize| -> String {
            (0..n)
                .map(|i| format!("{}k{i}:\n", "  ".repeat(i + 1)))
                .collect()
        };
        let mixed = |n: usize| -> String {
            (0..n)
                .map(|i| {
                    let pad = "  ".repeat(i);
                    if i % 2 == 0 {
                        format!("{pad}  k{i}:\n")
                    } else {
                        format!("{pad}- k{i}:\n")
                    }
                })
                .collect()
        };
        // (refused, read): both at each limit.
        let mut seen = [0, 0];
        for max_depth in [3, 8, 64] {
            let options = DecodeOptions::default().with_max_depth(max_depth);
            for n in max_depth.saturating_sub(3)..max_depth + 2 {
                for nest in [maps(n), mixed(n)] {
                    let text = format!("{secret}x:\n{nest}");
                    let parsed = serde_saphyr::from_str_with_options::<super::super::raw::Doc<'_>>(
                        &text,
                        super::super::yaml_options(&text, &options),
                    );
                    let fast = object(&text, max_depth);
                    assert_eq!(
                        fast.is_some(),
                        parsed.is_ok(),
                        "depth limit {max_depth}:\n{text}"
                    );
                    seen[usize::from(fast.is_some())] += 1;
                }
            }
        }
        assert!(seen[0] >= 6 && seen[1] >= 6, "{seen:?}");
    }

    const ITEM: &str = "apiVersion: v1\ndata:\n  format: Y2xvdWQtY29uZmln\n  value: IyMgdGVtcGxhdGU=\nkind: Secret\nmetadata:\n  annotations:\n    note: |\n      free text: with anything [ { # &\n\n      more\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\n  name: demo-control-plane-4fplp\n  namespace: default\n  ownerReferences:\n  - apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n    controller: true\n    kind: RKE2Config\n    name: demo\n  - apiVersion: v1\n    kind: Other\n  resourceVersion: \"1234\"\n  uid: 'a''b'\ntype: cluster.x-k8s.io/secret\n";

    #[test]
    fn reads_the_kubectl_shape() {
        let o = shaped_object(ITEM).unwrap();
        assert_eq!(o.kind.unwrap().0, "Secret");
        assert_eq!(o.secret_type.unwrap().0, "cluster.x-k8s.io/secret");
        let m = o.metadata.unwrap();
        assert_eq!(m.name.unwrap().0, "demo-control-plane-4fplp");
        assert_eq!(m.namespace.unwrap().0, "default");
        assert_eq!(
            m.labels
                .unwrap()
                .get("cluster.x-k8s.io/cluster-name")
                .unwrap(),
            "demo"
        );
        let d = o.data.unwrap();
        assert_eq!(d.get("value").unwrap(), "IyMgdGVtcGxhdGU=");
        assert!(matches!(d.get("format").unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn gives_up_outside_the_subset() {
        for (from, to) in [
            ("  value: IyMg", "  value: 'IyMg"),
            ("  value: IyMg", "  value: &a IyMg"),
            (
                "  value: IyMgdGVtcGxhdGU=\n",
                "  value: IyMgdGVtcGxhdGU=\n    more\n",
            ),
            ("  name: demo-control-plane-4fplp", "  name: \"x\""),
            ("  name: demo-control-plane-4fplp", "  name: 123"),
            ("kind: Secret", "kind: Secret # comment"),
            ("data:\n", "data: {}\n"),
            ("type: cluster", "type:\tcluster"),
            ("kind: Secret\n", "kind: Secret\nkind: Secret\n"),
            ("  format: Y2xv", "  format: Y2xv\n  format: Y2xv"),
            ("apiVersion: v1\n", "apiVersion: v1\n  x: 1\n"),
            ("  - apiVersion: v1\n", "  -  apiVersion: v1\n"),
            ("  - apiVersion: v1\n", "  - \"a\": 1\n"),
            (
                "  creationTimestamp: \"2026-01-01T00:00:00Z\"",
                "  creationTimestamp: \"2026",
            ),
            ("  uid: 'a''b'", "  uid: a: b"),
            (
                "    controller: true\n",
                "    controller: true\n     x: 1\n",
            ),
            ("  - apiVersion: v1\n", "  - [a]\n"),
            ("      more\n", "    less\n"),
            (
                "type: cluster.x-k8s.io/secret\n",
                "type: cluster.x-k8s.io/secret\n  stray: 1\n",
            ),
        ] {
            let text = ITEM.replacen(from, to, 1);
            assert_ne!(text, ITEM, "{to}");
            assert!(shaped_object(&text).is_none(), "accepted: {to}");
        }
        // Comments and quoted scalars where nothing is read are no reason to give up (an
        // owner's `apiVersion` is read: quoted there, the parser decides).
        let text = ITEM.replacen("apiVersion: v1\n", "apiVersion: \"v1\"\n# c\n  # d\n", 1);
        assert!(shaped_object(&text).is_some());
        let owners = shaped_object(ITEM)
            .and_then(|o| o.metadata)
            .and_then(|m| m.owner_references)
            .expect("the owners read");
        let kinds: Vec<&str> = owners
            .iter()
            .filter_map(|o| o.kind.as_ref().map(|k| k.0.as_ref()))
            .collect();
        assert_eq!(kinds, ["RKE2Config", "Other"]);
        let quoted = ITEM.replace("  - apiVersion: v1\n", "  - apiVersion: \"v1\"\n");
        assert!(shaped_object(&quoted).is_none());
    }

    #[test]
    fn keys_and_one_line_scalars_read_as_the_gate_reads_them() {
        let kind = |content| match key_value(content) {
            None => "-".to_owned(),
            Some((key, Value::Block)) => format!("{key} block"),
            Some((key, Value::BlockScalar)) => format!("{key} |"),
            Some((key, Value::Inline(v))) => format!("{key} = {v}"),
        };
        for (content, read) in [
            ("a:", "a block"),
            ("a: ", "a block"),
            ("a/b.c-d_e:   x y", "a/b.c-d_e = x y"),
            ("a: |-", "a |"),
            ("a: >+", "a |"),
            // An indentation digit, or two chomping indicators: not a header here.
            ("a: |2", "a = |2"),
            ("a: |--", "a = |--"),
            ("a: \u{a0}x", "a = \u{a0}x"),
            ("a:x", "-"),
            ("a:x: y", "-"),
            ("-a: x", "-"),
            (".a: x", "-"),
            ("\"a\": x", "-"),
            ("é: x", "-"),
            (": x", "-"),
        ] {
            assert_eq!(kind(content), read, "{content:?}");
        }
        for (scalar, ok) in [
            ("\"a\"", true),
            ("'a'", true),
            ("plain text", true),
            ("a: b", false),
            ("a # b", false),
            ("a:", false),
            ("&a x", false),
        ] {
            assert_eq!(scalar_ok(scalar), ok, "{scalar:?}");
        }
    }

    fn summary(o: &RawObject<'_>) -> String {
        let pairs = |p: &Option<Pairs<'_>>| {
            p.as_ref().map(|p| {
                p.0.iter()
                    .map(|(k, v)| format!("{}={}", k.0, v.0))
                    .collect::<Vec<_>>()
            })
        };
        let m = o.metadata.as_ref();
        format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}",
            o.kind.as_ref().map(|s| &s.0),
            o.secret_type.as_ref().map(|s| &s.0),
            m.and_then(|m| m.name.as_ref()).map(|s| &s.0),
            m.and_then(|m| m.namespace.as_ref()).map(|s| &s.0),
            m.map(|m| pairs(&m.labels)),
            pairs(&o.data),
            pairs(&o.string_data),
            o.items.is_some()
        )
    }

    /// Differential: wherever the fast path accepts a text, the full parser reads the same.
    #[test]
    fn agrees_with_the_full_parser_on_items_and_mutations() {
        // Every kind of Secret the fixtures hold, CAPRKE2 main's machine plans among them.
        let lists = [
            include_str!("../../tests/data/secrets/list-all.yaml"),
            include_str!("../../tests/data/secrets/list-main-branch.yaml"),
        ];
        let mut items: Vec<String> = Vec::new();
        for list in lists {
            for line in list.lines().skip_while(|l| *l != "items:").skip(1) {
                if let Some(rest) = line.strip_prefix("- ") {
                    items.push(format!("{rest}\n"));
                } else if let Some(rest) = line.strip_prefix("  ") {
                    if let Some(last) = items.last_mut() {
                        last.push_str(rest);
                        last.push('\n');
                    }
                } else {
                    break;
                }
            }
        }
        assert!(items.len() > 30);
        assert!(
            items
                .iter()
                .any(|i| i.contains("type: rke.cattle.io/machine-plan"))
        );
        let mut accepted = 0;
        let mut checked = 0;
        let replacements = [
            " ", ":", "'", "\"", "#", "&", "*", "-", "\t", "\n", "[", "{", "|", "!", "  ", "1",
        ];
        for (n, item) in items.iter().enumerate() {
            let mut texts = vec![item.clone()];
            // Mutations in the head of the item, where the metadata is.
            let head: Vec<usize> = item.char_indices().map(|(i, _)| i).take(400).collect();
            for (k, &at) in head.iter().enumerate().filter(|(k, _)| (k + n) % 7 == 0) {
                let mut t = item.clone();
                t.replace_range(
                    at..at + item[at..].chars().next().map_or(0, char::len_utf8),
                    replacements[k % replacements.len()],
                );
                texts.push(t);
            }
            for text in texts {
                let fast = shaped_object(&text);
                let mut options = serde_saphyr::Options::default();
                options.with_snippet = false;
                let full: Result<Option<super::super::raw::Doc<'_>>, _> =
                    serde_saphyr::from_str_with_options(&text, options);
                checked += 1;
                if let Some(fast) = fast {
                    accepted += 1;
                    match full {
                        Ok(Some(super::super::raw::Doc::Object(full))) => {
                            assert_eq!(summary(&fast), summary(&full), "{text}")
                        }
                        other => {
                            panic!("fast path accepted what the parser reads as {other:?}:\n{text}")
                        }
                    }
                }
            }
        }
        assert!(accepted > 30, "{accepted} of {checked}");
    }
}
