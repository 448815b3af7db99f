//! Support for the code `#[tool]` generates. Not API: anything here may change in any release.

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::tool::contract::Settings;

/// What `#[derive(FastCheck)]` and `#[tool]`'s generated checks call.
pub mod fast {
    pub use crate::schema::fast::FastCheck;
    pub use crate::schema::fast::check::{Field, Fns};
    pub use crate::schema::fast::generated::{
        Members, extra_ok, key_is, member, names_shape, object_shape, one_of_shape,
    };
    pub use crate::schema::fast::probe::{CheckerFns, No, Probe, ProbeNone, Yes, field, fns_of};
    pub use crate::schema::fast::validator::Generated;
}
pub use crate::tool::{ToolContext, ToolReturn};

use std::future::Future;

/// A spanned check that the body's future can move between threads (type-checked where
/// `#[tool]` writes it, under `if false`: never compiled into the tool).
pub fn assert_send<F: Future + Send>(_: &F) {}

/// Runs a blocking body (a `#[tool]` on a plain `fn`) on Tokio's blocking pool. Awaiting it
/// yields, and it gives up on the body when `signal` fires (a deadline, the caller's abort), so
/// the caller is released at once while the thread finishes its work; a panic becomes the
/// call's error.
pub async fn blocking<R: Send + 'static>(
    signal: crate::call::Signal,
    body: impl FnOnce() -> R + Send + 'static,
) -> Result<R, crate::ToolError> {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Err(crate::ToolError::new(
            "a blocking `#[tool]` body (a plain `fn`) runs on Tokio's blocking pool: call it \
             inside a Tokio runtime",
        ));
    };
    // Already cancelled: the body never starts (its side effects would be for nobody).
    if signal.is_cancelled() {
        return Err(crate::ToolError::new(
            "the blocking body was not started: its signal had fired",
        ));
    }
    let task = handle.spawn_blocking(body);
    tokio::select! {
        joined = task => match joined {
            Ok(returned) => Ok(returned),
            Err(error) if error.is_panic() => {
                Err(crate::ToolError::from_panic_payload(error.into_panic()))
            }
            Err(error) => Err(crate::ToolError::new(format!(
                "the blocking body did not run: {error}"
            ))),
        },
        () = signal.cancelled() => Err(crate::ToolError::new(
            "the blocking body was abandoned when its signal fired (its thread runs on)",
        )),
    }
}

/// What a stateful tool's name means as a value (`registry.register(ReadFile)`): not a tool.
/// Converting it into a `ToolDefinition` fails with a message naming `ReadFile::with(state)`.
pub struct NeedsState<T>(std::marker::PhantomData<fn() -> T>);

impl<T> NeedsState<T> {
    /// The marker.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

/// Never implemented: the bound that carries the message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` holds state: build it with `{Self}::with(state)`",
    label = "a stateful tool is registered with its state: `{Self}::with(state)`",
    note = "the function's first parameter is `State(..): State<T>`, so each `{Self}` holds a `T` (cloned into every call)"
)]
pub trait BuiltWithState: sealed::Never {}

mod sealed {
    /// Private and implemented for nothing, so `BuiltWithState` cannot be implemented either.
    pub trait Never {}
}

impl<T: crate::Tool + BuiltWithState> From<NeedsState<T>> for crate::ToolDefinition {
    fn from(_: NeedsState<T>) -> Self {
        // Not reachable (no type is `BuiltWithState`); a definition that refuses to register.
        crate::ToolDefinition::invalid(
            String::new(),
            String::new(),
            crate::schema::bridge::BridgeError::internal(
                "a stateful tool is built with `with(state)`".to_owned(),
            ),
        )
    }
}

/// Every struct field and enum variant name serde accepts for `T` (aliases included): the
/// inline form's parameter types, checked at registration. `NamesOf::<T>::NEW.names()` picks
/// this where `T: DeserializeOwned` and the empty fallback (behind `Deref`) otherwise, so a
/// parameter that is not `Deserialize` is reported once, by the arguments struct's derive.
pub struct NamesOf<T>(std::marker::PhantomData<fn() -> T>);

impl<T> NamesOf<T> {
    /// The probe.
    pub const NEW: Self = Self(std::marker::PhantomData);
}

impl<T: serde::de::DeserializeOwned> NamesOf<T> {
    /// `T`'s names.
    pub fn names(&self) -> std::collections::BTreeSet<&'static str> {
        crate::tool::typed::serde_names::<T>()
    }
}

/// The fallback of [`NamesOf`]: no names.
pub struct NoNames;

impl NoNames {
    /// No names.
    pub fn names(&self) -> std::collections::BTreeSet<&'static str> {
        std::collections::BTreeSet::new()
    }
}

impl<T> std::ops::Deref for NamesOf<T> {
    type Target = NoNames;
    fn deref(&self) -> &NoNames {
        &NoNames
    }
}

/// The arguments decode `#[tool]` writes for the inline form (without `#[derive(Deserialize)]`,
/// whose output rustc re-checks whenever the lines above it move: BENCHMARKS.md, compile time).
/// The generated visitor keeps one slot per field; these helpers, generic only over types the
/// author does not write, do the rest, so they are compiled once for every tool.
pub mod de {
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    /// A map key: the index of the field it names, or `fields.len()` for another key (an
    /// error when `deny_unknown`).
    pub struct Key {
        /// The fields' names, in order.
        pub fields: &'static [&'static str],
        /// Whether another key is an error.
        pub deny_unknown: bool,
    }

    impl<'de> DeserializeSeed<'de> for Key {
        type Value = usize;
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
            deserializer.deserialize_identifier(self)
        }
    }

    impl Visitor<'_> for Key {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a field identifier")
        }
        fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
            match self.fields.iter().position(|field| *field == key) {
                Some(index) => Ok(index),
                None if self.deny_unknown => Err(E::unknown_field(key, self.fields)),
                None => Ok(self.fields.len()),
            }
        }
        fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<usize, E> {
            match std::str::from_utf8(key) {
                Ok(key) => self.visit_str(key),
                Err(_) if self.deny_unknown => {
                    Err(E::unknown_field(&String::from_utf8_lossy(key), self.fields))
                }
                Err(_) => Ok(self.fields.len()),
            }
        }
        fn visit_u64<E: de::Error>(self, index: u64) -> Result<usize, E> {
            match usize::try_from(index) {
                Ok(index) if index < self.fields.len() => Ok(index),
                _ if self.deny_unknown => Err(E::invalid_value(
                    de::Unexpected::Unsigned(index),
                    &"the index of a field",
                )),
                _ => Ok(self.fields.len()),
            }
        }
    }

    /// Decodes the value of the field `name` into its slot; a second value is an error.
    pub fn value<'de, A: MapAccess<'de>, T: de::Deserialize<'de>>(
        map: &mut A,
        slot: &mut Option<T>,
        name: &'static str,
    ) -> Result<(), A::Error> {
        if slot.is_some() {
            return Err(de::Error::duplicate_field(name));
        }
        *slot = Some(map.next_value()?);
        Ok(())
    }

    /// Skips the value of a key that names no field.
    pub fn skip<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
        map.next_value::<de::IgnoredAny>().map(drop)
    }

    /// The field's value, or what serde gives a missing field: `None` for an `Option`, a
    /// "missing field" error otherwise.
    pub fn field<'de, T: de::Deserialize<'de>, E: de::Error>(
        slot: Option<T>,
        name: &'static str,
    ) -> Result<T, E> {
        match slot {
            Some(value) => Ok(value),
            None => T::deserialize(Missing(name, PhantomData)),
        }
    }

    /// Whether serde decodes a missing `T` (an `Option`): the field is then not `required`.
    /// `Optional::<T>::NEW.get()` picks this where `T: Deserialize` and `false` (behind
    /// `Deref`) otherwise, so a parameter that is not `Deserialize` is reported once, by the
    /// decode.
    pub struct Optional<T>(PhantomData<fn() -> T>);

    impl<T> Optional<T> {
        /// The probe.
        pub const NEW: Self = Self(PhantomData);
    }

    impl<T: de::DeserializeOwned> Optional<T> {
        /// Whether a missing `T` decodes.
        pub fn get(&self) -> bool {
            T::deserialize(Missing::<de::value::Error>("", PhantomData)).is_ok()
        }
    }

    /// The fallback of [`Optional`].
    pub struct NotDeserialize;

    impl NotDeserialize {
        /// Not known to be optional.
        pub fn get(&self) -> bool {
            false
        }
    }

    impl<T> std::ops::Deref for Optional<T> {
        type Target = NotDeserialize;
        fn deref(&self) -> &NotDeserialize {
            &NotDeserialize
        }
    }

    /// The deserializer of a field that is not there.
    struct Missing<E>(&'static str, PhantomData<E>);

    impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
        type Error = E;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
            Err(E::missing_field(self.0))
        }
        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
            visitor.visit_none()
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
            identifier ignored_any
        }
    }
}

/// The inline form's arguments schema, which `#[tool]` writes itself when the parameters carry
/// no `serde` or `schemars` attributes (without `#[derive(JsonSchema)]`, for the reason given in
/// [`de`]): the same schema as schemars' derive.
pub mod schema {
    use schemars::Schema;
    use serde_json::{Map, Value};

    /// `{"type": "object"}`, closed when `deny_unknown`.
    pub fn object(deny_unknown: bool) -> Schema {
        let mut object = Map::new();
        object.insert("type".to_owned(), Value::from("object"));
        if deny_unknown {
            object.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        Schema::from(object)
    }

    /// Adds the property `name` with the schema `property`, its doc comment's title and
    /// description (each when not empty), and to `required` unless `optional`.
    pub fn property(
        schema: &mut Schema,
        name: &str,
        title: &str,
        description: &str,
        mut property: Schema,
        optional: bool,
    ) {
        for (key, text) in [("title", title), ("description", description)] {
            if !text.is_empty() {
                property.insert(key.to_owned(), Value::from(text));
            }
        }
        let object = schema.ensure_object();
        if let Some(properties) = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
        {
            properties.insert(name.to_owned(), property.into());
        }
        if !optional
            && let Some(required) = object
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
        {
            required.push(Value::from(name));
        }
    }
}
