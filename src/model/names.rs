//! The SPEC's names of the model's enum values (`needs-human`, `wip-commit`, …), derived
//! once from the variant names by the case rule serde uses (strum's `IntoStaticStr`).

use super::{Action, Checks, Liveness, Operation, PrState, Review, State};

/// `as_str`, the SPEC's name of a value: derived once from the variant's name by the case
/// rule serde uses for the same enum (strum's `IntoStaticStr`); `Display` writes it.
macro_rules! derived_names {
    ($($t:ident),*) => {$(
        impl $t {
            /// The SPEC's name for this value (as serialized).
            pub fn as_str(self) -> &'static str {
                self.into()
            }
        }
        // The name as it is: a width in a format string does not pad it.
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
derived_names!(Liveness, State, Action, Operation, PrState, Checks, Review);

#[cfg(test)]
mod tests {
    use strum::IntoEnumIterator;

    use super::super::*;

    fn same<T: Serialize + IntoEnumIterator + Copy + std::fmt::Display + Into<&'static str>>() {
        for v in T::iter() {
            let name: &'static str = v.into();
            assert_eq!(serde_json::to_value(v).unwrap().as_str(), Some(name));
            assert_eq!(v.to_string(), name);
        }
    }

    /// Every value's SPEC name (`as_str`, `Display`) is its serialized name.
    #[test]
    fn names_are_the_serialized_names() {
        same::<Liveness>();
        same::<State>();
        same::<Action>();
        same::<Operation>();
        same::<PrState>();
        same::<Checks>();
        same::<Review>();
    }
}
