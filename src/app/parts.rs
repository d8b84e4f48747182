//! The library's parts below the commands that the tests drive directly, each re-exported
//! from the module that owns it (nothing else of those modules is public).

/// The forge seam: asking a forge for pull requests and their feedback
/// ([`crate::forge`]), and the model types of its answers.
pub mod forge {
    pub use crate::forge::{Ask, Forge, GitHub, View, view_of};
    pub use crate::model::{ChangeRequest, Checks, FailingCheck, Feedback, Pr, PrState, Review};
}

/// The resume prompt's fences around untrusted text ([`crate::resume`]).
pub mod prompt {
    pub use crate::resume::feedback::{FEEDBACK_BEGIN, FEEDBACK_END};
    pub use crate::resume::{FENCE_BEGIN, FENCE_END};
}

/// The milestone hook's files and reach ([`crate::hook`]) and the ledger read it is
/// checked against ([`crate::ledger::read_task`]).
pub mod hook {
    pub use crate::hook::{direct_script, reach, script, unledgered_milestones};
    pub use crate::ledger::read_task;
}

/// Reading how an attempt ended: the final message's classifier ([`crate::outcome`]),
/// the agents' output ([`crate::agent`]), and how much of a message is kept
/// ([`crate::record`]).
pub mod outcome {
    pub use crate::agent::{Habits, decide, parse_result, transcript_error};
    pub use crate::outcome::classify;
    pub use crate::record::{MESSAGE_KEEP_BYTES, tail_utf8};
}

/// The test-only failpoints' arming variable ([`crate::failpoint`]).
pub mod failpoint {
    pub use crate::failpoint::{ARM_ENV, ARM_VALUE};
}

/// A worktree's reading, whole or through the file watcher ([`crate::worktree`]).
pub mod watch {
    pub use crate::worktree::reading;
}
