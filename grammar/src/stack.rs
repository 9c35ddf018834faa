//! Room on the stack for recursive walks over chains of any length.
//!
//! Nesting is capped by `depth`, but a left-associative chain (`a + b + …`, `x or y or …`,
//! `n.next.next…`) is not nesting and is never refused, so every recursive walk over
//! expressions (lowering, checking, evaluation, printing, comparing, cloning) can meet one as
//! deep as the file is long. Each such walk calls [`deep`] once per level: it costs a
//! comparison of the stack pointer, and when the current segment runs low it continues on a
//! fresh heap-allocated one instead of overflowing.

/// What must be left on the stack before a level runs on the current segment: one level of
/// the largest walk (a debug build's evaluator) fits well within it.
const RED_ZONE: usize = 256 * 1024;

/// The size of each further segment: a few thousand levels, so segments are rarely switched.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, on a fresh stack segment if the current one is nearly used up.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Implements `Clone`, `PartialEq` and `Debug` for an expression type `{ kind, span }` with each
/// level under [`deep`]: derived, they recurse without it. The syntax tree's and the lowered
/// program's expressions both use it.
#[macro_export]
macro_rules! deep_expression_traits {
    ($expr:ident) => {
        impl Clone for $expr {
            fn clone(&self) -> Self {
                $crate::stack::deep(|| $expr { kind: self.kind.clone(), span: self.span })
            }
        }

        impl PartialEq for $expr {
            fn eq(&self, other: &Self) -> bool {
                $crate::stack::deep(|| self.span == other.span && self.kind == other.kind)
            }
        }

        impl std::fmt::Debug for $expr {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::stack::deep(|| {
                    f.debug_struct(stringify!($expr)).field("kind", &self.kind).field("span", &self.span).finish()
                })
            }
        }
    };
}
