//! Limits and switches for decoding.

/// Limits that bound the work done on hostile input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// The most bytes any one gzip stream may inflate to. Default: 16 MiB, sixteen times the
    /// largest Secret Kubernetes stores.
    pub max_inflated: u64,
    /// The deepest nesting of YAML collections accepted. Default: 64.
    pub max_depth: usize,
    /// The largest `data.value` accepted, in decoded bytes. Default: 1 MiB, what Kubernetes
    /// allows for a whole Secret. Checked on the base64 length before anything is decoded.
    pub max_value: u64,
    /// The most bytes of text one object of a streamed input may hold (a Secret, a `List` item,
    /// a YAML document), and bare user data. Default: 8 MiB (a Secret the API server accepts,
    /// with its `last-applied-configuration` copy, is under 3 MiB). Enforced while reading, so
    /// memory stays bounded whatever the input holds.
    pub max_object: u64,
    /// The most bytes of an input read whole into memory (`decode`, `encode`, `redact`).
    /// Default: 256 MiB.
    pub max_input: u64,
    /// Whether the annotations `render` writes on its output (the manifest findings, where a
    /// Secret comes from and the path its data takes) are read into each Secret's
    /// `Origin`. Default: off, so that no input decides by its own
    /// annotations what a report measures or reports; `render … | lint --from-render` turns it
    /// on. Read or not, they never take a target away from `size`.
    pub render_annotations: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_inflated: 16 << 20,
            max_depth: 64,
            max_value: 1 << 20,
            max_object: 8 << 20,
            max_input: 256 << 20,
            render_annotations: false,
        }
    }
}

impl DecodeOptions {
    /// The default limits.
    ///
    /// ```
    /// use rke2_payload::DecodeOptions;
    ///
    /// let options = DecodeOptions::new().with_max_inflated(4 << 20).with_max_depth(32);
    /// assert_eq!((options.max_inflated, options.max_depth), (4 << 20, 32));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`DecodeOptions::max_inflated`].
    pub fn with_max_inflated(mut self, bytes: u64) -> Self {
        self.max_inflated = bytes;
        self
    }

    /// Sets [`DecodeOptions::max_depth`].
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets [`DecodeOptions::max_value`].
    pub fn with_max_value(mut self, bytes: u64) -> Self {
        self.max_value = bytes;
        self
    }

    /// Sets [`DecodeOptions::max_object`].
    pub fn with_max_object(mut self, bytes: u64) -> Self {
        self.max_object = bytes;
        self
    }

    /// Sets [`DecodeOptions::max_input`].
    pub fn with_max_input(mut self, bytes: u64) -> Self {
        self.max_input = bytes;
        self
    }

    /// Sets [`DecodeOptions::render_annotations`].
    pub fn with_render_annotations(mut self, read: bool) -> Self {
        self.render_annotations = read;
        self
    }
}
