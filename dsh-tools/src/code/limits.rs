//! What one `run_code` run may hold on the host besides its engine's heap: the arguments of its
//! calls in flight and the results it attaches for the model's next step.

/// The host memory one `run_code` run may take outside its engine, set per registry with
/// [`Registry::set_code_host_limits`](crate::Registry::set_code_host_limits).
///
/// A run's memory is bounded by the sum of its parts: the engine's heap
/// ([`CodeRuntimeConfig::max_old_generation_size_mb`](super::CodeRuntimeConfig)), the
/// arguments in flight ([`max_in_flight_argument_bytes`](Self::max_in_flight_argument_bytes)),
/// the output ledger (at most twice
/// [`max_output_bytes`](super::CodeRuntimeConfig::max_output_bytes), counted as the host holds
/// it), the completion value (its host copy held to the same bound) and the attached results
/// ([`max_attached_bytes`](Self::max_attached_bytes)): 1,090 MiB with the defaults; in
/// deferred mode, the journal of its committed calls too
/// ([`max_journal_bytes`](Self::max_journal_bytes)).
/// `BENCHMARKS.md` ("Code Mode memory") measures what hostile programs reach against that sum.
///
/// ```
/// use dsh_tools::Registry;
/// use dsh_tools::code::CodeHostLimits;
///
/// let registry = Registry::new();
/// assert_eq!(registry.code_host_limits(), CodeHostLimits::default());
/// registry.set_code_host_limits(
///     CodeHostLimits::default()
///         .max_in_flight_argument_bytes(32 << 20)
///         .max_attached_results(4),
/// );
/// assert_eq!(registry.code_host_limits().max_attached_results, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodeHostLimits {
    /// Host bytes the arguments of one run's calls may take from submission to commit (each
    /// call's copy and its record's, estimated): 256 MiB. A call that would pass it is refused
    /// (`<name> not dispatched`, saying why); the program may retry once earlier calls settled.
    pub max_in_flight_argument_bytes: usize,
    /// Image-bearing results one run attaches for the model's next step (Code Mode spec §4.4.4
    /// step 2): 20. Later ones are not attached; the run's result says how many were left out.
    pub max_attached_results: usize,
    /// Bytes (as JSON) of the attached results' content: 64 MiB, counted like the count.
    pub max_attached_bytes: usize,
    /// In deferred mode, the journal of a run's committed calls (their arguments and results,
    /// kept so that a program stopped for an approval is replayed without running them
    /// again): 64 MiB, as JSON. A run whose journal would pass it fails with
    /// `CODE_RUN_FAILED`, saying so (inline runs keep no journal).
    pub max_journal_bytes: usize,
}

impl Default for CodeHostLimits {
    fn default() -> Self {
        Self {
            max_in_flight_argument_bytes: 256 << 20,
            max_attached_results: 20,
            max_attached_bytes: 64 << 20,
            max_journal_bytes: 64 << 20,
        }
    }
}

impl CodeHostLimits {
    /// With [`max_in_flight_argument_bytes`](Self::max_in_flight_argument_bytes).
    #[must_use]
    pub fn max_in_flight_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_in_flight_argument_bytes = bytes;
        self
    }

    /// With [`max_attached_results`](Self::max_attached_results).
    #[must_use]
    pub fn max_attached_results(mut self, count: usize) -> Self {
        self.max_attached_results = count;
        self
    }

    /// With [`max_attached_bytes`](Self::max_attached_bytes).
    #[must_use]
    pub fn max_attached_bytes(mut self, bytes: usize) -> Self {
        self.max_attached_bytes = bytes;
        self
    }

    /// With [`max_journal_bytes`](Self::max_journal_bytes).
    #[must_use]
    pub fn max_journal_bytes(mut self, bytes: usize) -> Self {
        self.max_journal_bytes = bytes;
        self
    }
}
