//! Identical payloads are read once.
//!
//! A management cluster's bootstrap Secrets repeat themselves: CAPRKE2 renders a Machine's user
//! data from its `RKE2Config`, and every replica of a MachineDeployment (or every joining
//! control-plane Machine of one cluster) gets the same template, so their `data.value` bytes are
//! identical; only the Secret's name differs. [`Memo`] keeps what was made of a payload, keyed by
//! the SHA-256 of the stored `format` and `value` keys, so that the next Secret with the same bytes
//! costs one hash instead of a decode, an inflate and a parse.
//!
//! What a memo holds must depend on those bytes alone (and on options fixed for the memo's
//! life): the per-Secret parts (name, namespace, cluster label) are put back by the caller.
//! [`crate::report::Inspector`] and [`crate::size::Sizer`] are built on it; a caller that renders
//! reports can keep its rendering the same way.
//!
//! ```
//! use rke2_payload::memo::Memo;
//! use rke2_payload::{DecodeOptions, Envelope};
//!
//! let list = br#"{"kind": "List", "items": [
//!   {"kind": "Secret", "metadata": {"name": "md-0-a"}, "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwo="}},
//!   {"kind": "Secret", "metadata": {"name": "md-0-b"}, "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwo="}}]}"#;
//! let options = DecodeOptions::default();
//! let envelope = Envelope::parse(list, &options)?;
//! let memo = Memo::new();
//! let mut decoded = 0;
//! for secret in &envelope.secrets {
//!     let bytes = memo.get_or_try_insert(secret, || {
//!         decoded += 1;
//!         secret.decode(&options).map(|p| p.userdata().len())
//!     })?;
//!     assert_eq!(*bytes, 14);
//! }
//! assert_eq!(decoded, 1);
//! # Ok::<(), rke2_payload::Error>(())
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::envelope::BootstrapSecret;

/// How many distinct payloads a memo keeps before it starts again. A kubectl dump lists the
/// replicas of one MachineDeployment next to each other (names sort together), so a small window
/// catches them; the bound keeps memory flat on a dump where nothing repeats.
pub const CAPACITY: usize = 256;

/// The SHA-256 of a Secret's stored `format` and `value`: equal digests, equal payloads.
type Key = [u8; 32];

/// What was made of each distinct payload, shared by the threads of one run.
///
/// Its `Debug` output shows how many payloads it keeps, never what it keeps (a report made with
/// secrets shown holds them).
pub struct Memo<T> {
    entries: Mutex<HashMap<Key, Arc<T>>>,
    capacity: usize,
}

impl<T> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo")
            .field("kept", &self.lock().len())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo::with_capacity(CAPACITY)
    }
}

impl<T> Memo<T> {
    /// A memo that keeps the last [`CAPACITY`] distinct payloads.
    pub fn new() -> Self {
        Memo::default()
    }

    /// A memo that keeps at most `capacity` distinct payloads (0 keeps none). When full, it
    /// forgets them all and starts again.
    pub fn with_capacity(capacity: usize) -> Self {
        Memo {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    /// What was made of a Secret with the same stored `format` and `value` as `secret`, or
    /// `make()`'s result, kept when it is `Ok` (errors are not kept). `make` must depend only on
    /// the payload, not on the Secret's name or labels. The lock is not held while `make` runs:
    /// two threads may both make the same entry, and one is kept.
    ///
    /// # Errors
    /// `make`'s error.
    pub fn get_or_try_insert<E>(
        &self,
        secret: &BootstrapSecret<'_>,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        self.by_key(key(secret), make)
    }

    fn by_key<E>(&self, key: Key, make: impl FnOnce() -> Result<T, E>) -> Result<Arc<T>, E> {
        if self.capacity == 0 {
            return make().map(Arc::new);
        }
        if let Some(hit) = self.lock().get(&key) {
            return Ok(Arc::clone(hit));
        }
        let made = Arc::new(make()?);
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(key, Arc::clone(&made));
        Ok(made)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<T>>> {
        // A panic elsewhere cannot leave the map half-written: insert and clear are whole.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The key of a Secret's payload: its stored `format` and `value` keys, with how each is stored
/// (base64 under `data`, text under `stringData`, or bare user data).
fn key(secret: &BootstrapSecret<'_>) -> Key {
    let mut hasher = Sha256::new();
    secret.feed_stored(&mut |part: &[u8]| hasher.update(part));
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn makes_each_key_once_and_starts_again_when_full() {
        let memo = Memo::with_capacity(2);
        let made = Cell::new(0);
        let make = |v: u32| {
            made.set(made.get() + 1);
            Ok::<_, ()>(v)
        };
        assert_eq!(*memo.by_key([1; 32], || make(1)).unwrap(), 1);
        assert_eq!(*memo.by_key([1; 32], || make(9)).unwrap(), 1);
        assert_eq!(*memo.by_key([2; 32], || make(2)).unwrap(), 2);
        assert_eq!(made.get(), 2);
        // Full: the third key clears the map, so key 1 is made again.
        assert_eq!(*memo.by_key([3; 32], || make(3)).unwrap(), 3);
        assert_eq!(*memo.by_key([1; 32], || make(1)).unwrap(), 1);
        assert_eq!(made.get(), 4);
    }

    #[test]
    fn errors_are_not_kept() {
        let memo: Memo<u32> = Memo::default();
        assert_eq!(memo.by_key([7; 32], || Err("bad")), Err("bad"));
        assert_eq!(*memo.by_key([7; 32], || Ok::<_, ()>(5)).unwrap(), 5);
    }

    #[test]
    fn debug_shows_counts_not_contents() {
        let memo = Memo::with_capacity(4);
        memo.by_key([1; 32], || Ok::<_, ()>("token-value".to_owned()))
            .unwrap();
        let shown = format!("{memo:?}");
        assert_eq!(shown, "Memo { kept: 1, capacity: 4 }");
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let memo = Memo::with_capacity(0);
        let made = Cell::new(0);
        for _ in 0..3 {
            memo.by_key([0; 32], || {
                made.set(made.get() + 1);
                Ok::<_, ()>(())
            })
            .unwrap();
        }
        assert_eq!(made.get(), 3);
    }

    #[test]
    fn the_key_covers_how_and_what_is_stored() {
        let options = crate::DecodeOptions::default();
        let doc = |name: &str, format: &str, value: &str| {
            format!(
                "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {{name: {name}}}\ndata:\n  format: {format}\n  value: {value}\n"
            )
        };
        let keys: Vec<Key> = [
            doc("a", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZwo="),
            doc("b", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZwo="), // another name: same key
            doc("a", "aWduaXRpb24=", "I2Nsb3VkLWNvbmZpZwo="),     // another format
            doc("a", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZyAK"), // another value
        ]
        .iter()
        .map(|text| {
            let envelope = crate::Envelope::parse(text.as_bytes(), &options).unwrap();
            key(&envelope.secrets[0])
        })
        .collect();
        assert_eq!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[0], keys[3]);
        assert_ne!(keys[2], keys[3]);
        // The same bytes as `stringData` text are another key: the base64 text differs in form.
        let plain = "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {name: a}\nstringData:\n  format: cloud-config\n  value: \"#cloud-config\\n\"\n";
        let envelope = crate::Envelope::parse(plain.as_bytes(), &options).unwrap();
        assert_ne!(key(&envelope.secrets[0]), keys[0]);
    }
}
