//! The walks over a spec tree, all without recursion: children in order, a bottom-up
//! [`fold`](ValueSchemaSpec::fold), and `Drop`, `Clone` and `PartialEq` built on them.

use super::super::compile::{build_below, free};
use super::tree::{
    ArraySpec, ObjectSpec, OneOfSpec, ParameterSchemaSpec, PropertySpec, ValueSchemaSpec,
};

impl ValueSchemaSpec {
    pub(super) fn arity(&self) -> usize {
        match self {
            Self::Array(a) => usize::from(a.items.is_some()),
            Self::Object(o) => o.properties.as_ref().map_or(0, ParameterSchemaSpec::len),
            Self::OneOf(u) => u.branches.len(),
            _ => 0,
        }
    }

    /// Pushes the child nodes in reverse declaration order.
    pub(super) fn push_children<'s>(&'s self, stack: &mut Vec<&'s ValueSchemaSpec>) {
        match self {
            Self::Array(a) => stack.extend(a.items.as_deref()),
            Self::Object(o) => {
                if let Some(p) = &o.properties {
                    stack.extend(p.entries.iter().rev().map(|(_, p)| &p.schema));
                }
            }
            Self::OneOf(u) => stack.extend(u.branches.iter().rev()),
            _ => {}
        }
    }

    /// Builds a `T` bottom-up over the tree, without recursion.
    pub(super) fn fold<'s, T>(
        &'s self,
        mut build: impl FnMut(&'s ValueSchemaSpec, Vec<T>) -> T,
    ) -> T {
        let mut order = Vec::new();
        let mut stack = Vec::new();
        self.push_children(&mut stack);
        while let Some(node) = stack.pop() {
            order.push(node);
            node.push_children(&mut stack);
        }
        let kids = build_below(
            &order,
            self.arity(),
            |n| n.arity(),
            |n, kids| build(n, kids),
        );
        build(self, kids)
    }

    /// Moves the child nodes out (and frees annotation values) so that dropping is flat.
    pub(super) fn detach(&mut self, out: &mut Vec<ValueSchemaSpec>) {
        self.annotations_mut().free();
        match self {
            Self::String(s)
            | Self::Number(s)
            | Self::Integer(s)
            | Self::Boolean(s)
            | Self::Null(s) => {
                s.enum_values
                    .take()
                    .into_iter()
                    .flatten()
                    .for_each(|v| free(Some(v)));
                free(s.const_value.take());
            }
            Self::Array(a) => out.extend(a.items.take().map(|b| *b)),
            Self::Object(o) => {
                if let Some(p) = o.properties.take() {
                    out.extend(p.entries.into_iter().map(|(_, p)| p.schema));
                }
            }
            Self::OneOf(u) => out.append(&mut u.branches),
            Self::Json(_) => {}
        }
    }
}

impl Drop for ValueSchemaSpec {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.detach(&mut stack);
        // Each popped node has its children moved out before it drops, so no drop nests.
        while let Some(mut node) = stack.pop() {
            node.detach(&mut stack);
        }
    }
}

impl Clone for ValueSchemaSpec {
    fn clone(&self) -> Self {
        self.fold(|spec, kids| {
            let mut kids = kids.into_iter();
            match spec {
                ValueSchemaSpec::Array(a) => ValueSchemaSpec::Array(ArraySpec {
                    annotations: a.annotations.clone(),
                    items: kids.next().map(Box::new),
                }),
                ValueSchemaSpec::Object(o) => ValueSchemaSpec::Object(ObjectSpec {
                    annotations: o.annotations.clone(),
                    additional_properties: o.additional_properties,
                    properties: o.properties.as_ref().map(|p| ParameterSchemaSpec {
                        entries: (p.entries.iter().zip(kids))
                            .map(|((name, prop), schema)| {
                                let required = prop.required;
                                (name.clone(), PropertySpec { schema, required })
                            })
                            .collect(),
                    }),
                }),
                ValueSchemaSpec::OneOf(u) => ValueSchemaSpec::OneOf(OneOfSpec {
                    annotations: u.annotations.clone(),
                    branches: kids.collect(),
                }),
                ValueSchemaSpec::Json(a) => ValueSchemaSpec::Json(a.clone()),
                scalar => match scalar.scalar() {
                    Some((kind, s)) => kind.wrap(s.clone()),
                    None => ValueSchemaSpec::json(),
                },
            }
        })
    }
}

impl PartialEq for ValueSchemaSpec {
    fn eq(&self, other: &Self) -> bool {
        use ValueSchemaSpec as V;
        let mut stack = vec![(self, other)];
        while let Some(pair) = stack.pop() {
            let same = match pair {
                (V::String(a), V::String(b))
                | (V::Number(a), V::Number(b))
                | (V::Integer(a), V::Integer(b))
                | (V::Boolean(a), V::Boolean(b))
                | (V::Null(a), V::Null(b)) => a == b,
                (V::Json(a), V::Json(b)) => a == b,
                (V::Array(a), V::Array(b)) => {
                    a.annotations == b.annotations
                        && match (&a.items, &b.items) {
                            (Some(x), Some(y)) => {
                                stack.push((&**x, &**y));
                                true
                            }
                            (x, y) => x.is_none() && y.is_none(),
                        }
                }
                (V::Object(a), V::Object(b)) => {
                    a.annotations == b.annotations
                        && a.additional_properties == b.additional_properties
                        && match (&a.properties, &b.properties) {
                            (Some(x), Some(y)) => {
                                let shape_eq = x.len() == y.len()
                                    && x.entries
                                        .iter()
                                        .zip(&y.entries)
                                        .all(|(p, q)| p.0 == q.0 && p.1.required == q.1.required);
                                let pairs = x.entries.iter().zip(&y.entries);
                                stack.extend(pairs.map(|(p, q)| (&p.1.schema, &q.1.schema)));
                                shape_eq
                            }
                            (x, y) => x.is_none() && y.is_none(),
                        }
                }
                (V::OneOf(a), V::OneOf(b)) => {
                    stack.extend(a.branches.iter().zip(&b.branches));
                    a.annotations == b.annotations && a.branches.len() == b.branches.len()
                }
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

impl Eq for ValueSchemaSpec {}
