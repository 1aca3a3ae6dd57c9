//! The Kubernetes CEL value types (`net.IP`, `net.CIDR`, `kubernetes.URL`,
//! `kubernetes.Quantity`, `kubernetes.Semver`) as values of the `cel` crate: each a Rust type
//! that reports its CEL type, compares equal as the apiserver's does, and is recovered from a
//! function's argument by the overload macros.

/// Makes `$ty` (a `'static`, `Clone + Debug + PartialEq` type) a CEL value of the type named
/// `$name`, kept in the static `$type_static`.
macro_rules! cel_value {
    ($ty:ty, $type_static:ident, $name:literal) => {
        pub(crate) static $type_static: cel::common::types::Type =
            cel::common::types::Type::new_unspecified_type($name);

        impl cel::common::value::Val for $ty {
            fn get_type(&self) -> &cel::common::types::Type {
                &$type_static
            }
            fn cel_type() -> &'static cel::common::types::Type {
                &$type_static
            }
            fn equals(&self, other: &dyn cel::common::value::Val) -> bool {
                other.downcast_ref::<$ty>().is_some_and(|o| o == self)
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }
            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }

        impl cel::common::value::StaticVal for $ty {}
    };
}

pub(crate) use cel_value;

/// An error of a Kubernetes function, worded as the apiserver words it: the rule's error then
/// reads `<message> evaluating rule: <rule>`.
pub(crate) fn error(function: &str, message: impl ToString) -> cel::ExecutionError {
    cel::ExecutionError::function_error(function, message)
}
