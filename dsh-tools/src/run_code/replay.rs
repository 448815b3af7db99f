//! A `run_code` program in deferred mode: stopped at the first call that asks, and replayed
//! from the start once that approval is answered (DESIGN.md, "Code Mode waits by replaying").
//!
//! A program cannot be suspended across processes, so it is run again: the calls it made before
//! the waiting one are answered from the journal (in submission order, never run again), the
//! waiting call runs with the answer, and what follows runs as in any run. The journal is checked
//! call by call: a replay that makes another call at a journaled place, or never makes the
//! waiting call, has diverged, and stops with nothing more run.

use crate::call::{ApprovalOutcome, Caller, PendingApproval, ReplayedCall};
use serde_json::Value;
use std::collections::VecDeque;

/// What the pipeline hands a resumed `run_code` call (through its `RunState`): the program's
/// journal and the claimed approval of its waiting call, with the answer.
pub(crate) struct Replay {
    pub(crate) journal: Vec<ReplayedCall>,
    pub(crate) waiting: u64,
    pub(crate) approval: PendingApproval,
    pub(crate) outcome: ApprovalOutcome,
    /// Who answers (the answering caller's current token, the same principal).
    pub(crate) caller: Option<Caller>,
}

/// What a call of a replayed program gets at its start.
pub(crate) enum Step {
    /// Not replayed: started as in any run.
    Fresh,
    /// Journaled: this result, not run again.
    Journaled(Box<crate::call::ToolExecutionResult>),
    /// The waiting call: run with the answer.
    Answered(Box<Answered>),
    /// Another call than the one made at this place before: the program stops.
    Diverged(String),
}

/// The waiting call's claimed approval, the answer, and who answers.
pub(crate) struct Answered {
    pub(crate) approval: PendingApproval,
    pub(crate) outcome: ApprovalOutcome,
    pub(crate) caller: Option<Caller>,
}

/// A replay in progress: what is left of the journal, and the waiting call until it is made.
pub(crate) struct Replaying {
    journal: VecDeque<ReplayedCall>,
    waiting: Option<(u64, Box<PendingApproval>, ApprovalOutcome, Option<Caller>)>,
}

/// The arguments of `value`, shortened for a message.
fn shown(tool: &str, arguments: &Value) -> String {
    let text = arguments.to_string();
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{tool}({cut}…)")
    } else {
        format!("{tool}({cut})")
    }
}

impl Replaying {
    pub(crate) fn new(replay: Replay) -> Self {
        let mut journal: Vec<ReplayedCall> = replay.journal;
        journal.sort_by_key(|c| c.n);
        Self {
            journal: journal.into(),
            waiting: Some((
                replay.waiting,
                Box::new(replay.approval),
                replay.outcome,
                replay.caller,
            )),
        }
    }

    /// What call `n` (`tool` with `arguments`) gets.
    pub(crate) fn step(&mut self, n: u64, tool: &str, arguments: &Value) -> Step {
        if let Some(made) = self.journal.front().filter(|c| c.n == n) {
            if made.tool != tool || !crate::json::json_equal(&made.arguments, arguments) {
                return Step::Diverged(format!(
                    "run_code: the program was resumed and made another call than before at \
                     call {n}: {} instead of {}; nothing more was run (a program resumed \
                     after an approval must make the same calls, in the same order, as the \
                     first time)",
                    shown(tool, arguments),
                    shown(&made.tool, &made.arguments)
                ));
            }
            let made = self.journal.pop_front().map(|c| c.result);
            return match made {
                Some(result) => Step::Journaled(Box::new(result)),
                None => Step::Fresh,
            };
        }
        match self.waiting.take() {
            Some((waiting, approval, outcome, caller)) if waiting == n => {
                if approval.tool != tool || !crate::json::json_equal(&approval.arguments, arguments)
                {
                    return Step::Diverged(format!(
                        "run_code: the program was resumed and made another call than the one \
                         approved at call {n}: {} instead of {}; it was not run",
                        shown(tool, arguments),
                        shown(&approval.tool, &approval.arguments)
                    ));
                }
                Step::Answered(Box::new(Answered {
                    approval: *approval,
                    outcome,
                    caller,
                }))
            }
            Some(waiting) => {
                self.waiting = Some(waiting);
                if n < self.waiting.as_ref().map_or(0, |w| w.0) {
                    // A journaled place the journal lacks: never the case for a journal this
                    // crate wrote (it holds every call before the waiting one).
                    return Step::Diverged(format!(
                        "run_code: the program was resumed and its journal has no call {n}; \
                         nothing more was run"
                    ));
                }
                Step::Fresh
            }
            None => Step::Fresh,
        }
    }

    /// Why the replay failed if the program ended without making every journaled call and the
    /// waiting one.
    pub(crate) fn unfinished(&self) -> Option<String> {
        let (n, approval, ..) = self.waiting.as_ref()?;
        Some(format!(
            "run_code: the program was resumed but did not make call {n} again ({}), the one \
             the approval was for; it was not run",
            shown(&approval.tool, &approval.arguments)
        ))
    }
}
