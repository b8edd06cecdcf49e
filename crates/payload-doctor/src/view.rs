//! Reading the fields of live objects of either API version (`v1beta1`, `v1beta2`): the paths
//! differ, what they mean does not. Every function here reads a parsed value; none fails.

use serde_json::Value;

/// The string at `path`.
pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

/// The value at `path`.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// The boolean at `path` (a string `"true"` is not one).
pub(crate) fn bool_at(v: &Value, path: &[&str]) -> Option<bool> {
    at(v, path).and_then(Value::as_bool)
}

/// `metadata.name`.
pub(crate) fn name(v: &Value) -> &str {
    str_at(v, &["metadata", "name"]).unwrap_or("")
}

/// `metadata.namespace`.
pub(crate) fn namespace(v: &Value) -> Option<&str> {
    str_at(v, &["metadata", "namespace"])
}

/// The label `key`.
pub(crate) fn label<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    at(v, &["metadata", "labels", key]).and_then(Value::as_str)
}

/// The kinds and names of `metadata.ownerReferences`.
pub(crate) fn owners(v: &Value) -> impl Iterator<Item = (&str, &str)> {
    at(v, &["metadata", "ownerReferences"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|o| Some((o.get("kind")?.as_str()?, o.get("name")?.as_str()?)))
}

/// The API version's last part (`v1beta1`, `v1beta2`).
pub(crate) fn version(v: &Value) -> &str {
    let api = str_at(v, &["apiVersion"]).unwrap_or("");
    api.rsplit_once('/').map_or(api, |(_, version)| version)
}

/// A condition, as either API version writes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Condition<'a> {
    /// `True`, `False` or `Unknown`.
    pub(crate) status: &'a str,
    pub(crate) reason: &'a str,
    pub(crate) message: &'a str,
}

impl Condition<'_> {
    pub(crate) fn is_true(&self) -> bool {
        self.status == "True"
    }

    /// `status` with the reason and a message, for `seen`.
    pub(crate) fn describe(&self, kind: &str) -> String {
        let mut out = format!("{kind}={}", self.status);
        if !self.reason.is_empty() {
            out.push_str(&format!(" ({})", self.reason));
        }
        if !self.message.is_empty() {
            out.push_str(&format!(": {}", shorten(self.message, 200)));
        }
        out
    }
}

/// The lists of conditions of an object, the ones CAPRKE2 v0.25 reads first: it reads the
/// `v1beta2` conditions (`metav1.Condition`), which a v1beta1 object carries in
/// `status.v1beta2.conditions` and a v1beta2 one in `status.conditions`; then a v1beta1
/// object's own `status.conditions` and the old conditions a v1beta2 object keeps in
/// `status.deprecated.v1beta1.conditions` (Cluster API v1.13 `api/core/v1beta1/conversion.go`).
fn condition_lists(v: &Value) -> impl Iterator<Item = &Value> {
    [
        &["status", "v1beta2", "conditions"][..],
        &["status", "conditions"][..],
        &["status", "deprecated", "v1beta1", "conditions"][..],
    ]
    .into_iter()
    .filter_map(|path| at(v, path).and_then(Value::as_array))
    .flatten()
}

/// The first condition of one of `types` (in that order of preference) in any list.
pub(crate) fn condition<'a>(v: &'a Value, types: &[&str]) -> Option<Condition<'a>> {
    types.iter().find_map(|t| {
        condition_lists(v)
            .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
            .map(|c| Condition {
                status: c.get("status").and_then(Value::as_str).unwrap_or("Unknown"),
                reason: c.get("reason").and_then(Value::as_str).unwrap_or(""),
                message: c.get("message").and_then(Value::as_str).unwrap_or(""),
            })
    })
}

/// At most `max` characters of `s`, an ellipsis when cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The host of a URL (`https://host:9345` → `host`; `[::1]:9345` → `::1`), and its port.
pub(crate) fn host_port(url: &str) -> (&str, Option<u16>) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(inner) = authority.strip_prefix('[') {
        let (host, after) = inner.split_once(']').unwrap_or((inner, ""));
        return (host, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().ok()),
        None => (authority, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_of_both_versions() {
        let v1beta1 = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "severity": "Warning", "reason": "WaitingForNode"}]}});
        let v1beta2 = json!({"status": {"conditions": [{"type": "Available", "status": "True"}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "True"}]}}}});
        assert_eq!(
            condition(&v1beta1, &["Ready"]).map(|c| c.status),
            Some("False")
        );
        assert_eq!(
            condition(&v1beta1, &["Ready"]).map(|c| c.describe("Ready")),
            Some("Ready=False (WaitingForNode)".to_owned())
        );
        assert!(condition(&v1beta2, &["Ready"]).is_some_and(|c| c.is_true()));
        assert!(condition(&v1beta2, &["Nope"]).is_none());
    }

    #[test]
    fn hosts_and_ports() {
        assert_eq!(host_port("https://10.0.0.1:9345"), ("10.0.0.1", Some(9345)));
        assert_eq!(
            host_port("https://[fd00::1]:9345/"),
            ("fd00::1", Some(9345))
        );
        assert_eq!(
            host_port("https://lb.example.com"),
            ("lb.example.com", None)
        );
        assert_eq!(host_port("lb:x"), ("lb", None));
    }

    #[test]
    fn versions_and_shortening() {
        assert_eq!(
            version(&json!({"apiVersion": "cluster.x-k8s.io/v1beta2"})),
            "v1beta2"
        );
        assert_eq!(version(&json!({"apiVersion": "v1"})), "v1");
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
