//! Sprig's path functions (Go's `path`, slash-separated).

use super::Ty::Str;
use super::{Func, Value, f, out, s};

/// Sprig's path functions (Go's `path`, slash-separated).
pub(super) fn sprig_paths(name: &str) -> Option<Func> {
    match name {
        "base" => f(&[Str], |c, a| out(c, path_base(s(&a[0])))),
        "dir" => f(&[Str], |c, a| out(c, path_dir(s(&a[0])))),
        "clean" => f(&[Str], |c, a| out(c, path_clean(s(&a[0])))),
        "ext" => f(&[Str], |c, a| {
            let t = s(&a[0]);
            let ext = t
                .rfind(['.', '/'])
                .filter(|&p| t.as_bytes()[p] == b'.')
                .map_or("", |p| &t[p..]);
            out(c, ext.to_owned())
        }),
        "isAbs" => f(&[Str], |_, a| Ok(Value::Bool(s(&a[0]).starts_with('/')))),
        _ => None,
    }
}

/// Go's `path.Clean`.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_owned()
}

/// Go's `path.Dir`.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}
