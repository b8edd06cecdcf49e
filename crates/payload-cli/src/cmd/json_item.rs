//! One Secret's JSON report, rendered once per distinct payload.
//!
//! The inspect and size reports begin with the Secret's own fields (`name`, `namespace`, and for
//! inspect `cluster`); everything after them depends on the payload alone. So the report of a
//! payload is rendered once with those fields null, the rest is kept (in a
//! [`Memo`](rke2_payload::memo::Memo)), and each Secret carrying the payload gets its own fields
//! written in front of that rest.

use rke2_payload::BootstrapSecret;

/// The rest of a rendered report: what follows the Secret's own fields. No `Debug`: with
/// `--show-secrets` it holds them.
pub(crate) struct Tail(Vec<u8>);

impl Tail {
    /// Takes the rest of `rendered`, a report rendered with each of `own` null, or `None` when
    /// it does not begin that way (a report that does is rendered anew for every Secret).
    pub(crate) fn of(rendered: &[u8], own: &[&str]) -> Option<Tail> {
        let mut prefix = String::from("{");
        for key in own {
            prefix.push_str(&format!("\"{key}\":null,"));
        }
        rendered
            .strip_prefix(prefix.as_bytes())
            .map(|rest| Tail(rest.to_vec()))
    }

    /// The whole report of one Secret: its own fields, then the rest.
    pub(crate) fn with_own(&self, own: &[(&str, Option<&str>)]) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.0.len() + 128);
        out.push(b'{');
        for (key, value) in own {
            serde_json::to_writer(&mut out, key)?;
            out.push(b':');
            serde_json::to_writer(&mut out, value)?;
            out.push(b',');
        }
        out.extend_from_slice(&self.0);
        Ok(out)
    }
}

/// A Secret's own fields as the inspect report writes them.
pub(crate) fn inspect_own<'a>(
    secret: &'a BootstrapSecret<'_>,
) -> [(&'static str, Option<&'a str>); 3] {
    [
        ("name", secret.name()),
        ("namespace", secret.namespace()),
        ("cluster", secret.cluster()),
    ]
}

/// A Secret's own fields as the size report writes them.
pub(crate) fn size_own<'a>(
    secret: &'a BootstrapSecret<'_>,
) -> [(&'static str, Option<&'a str>); 2] {
    [("name", secret.name()), ("namespace", secret.namespace())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_is_kept_and_each_secret_s_fields_are_written_in_front() {
        let rendered = br#"{"name":null,"namespace":null,"format":"ignition","n":1}"#;
        let tail = Tail::of(rendered, &["name", "namespace"]).expect("tail");
        let item = tail
            .with_own(&[("name", Some("a \"quoted\" name")), ("namespace", None)])
            .expect("JSON");
        let value: serde_json::Value = serde_json::from_slice(&item).expect("valid JSON");
        assert_eq!(value["name"], "a \"quoted\" name");
        assert!(value["namespace"].is_null());
        assert_eq!(value["format"], "ignition");
        assert_eq!(value["n"], 1);
    }

    #[test]
    fn a_report_that_does_not_begin_with_the_fields_is_refused() {
        assert!(
            Tail::of(
                br#"{"name":"x","namespace":null,"a":1}"#,
                &["name", "namespace"]
            )
            .is_none()
        );
        assert!(
            Tail::of(
                br#"{"namespace":null,"name":null,"a":1}"#,
                &["name", "namespace"]
            )
            .is_none()
        );
        assert!(Tail::of(br#"{"name":null}"#, &["name", "namespace"]).is_none());
    }
}
