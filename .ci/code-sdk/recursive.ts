// Type-checked only, against the SDK of recursive-tools.json: recursive types are declared by
// name (Tree, and Tree_2 for the other tool's different Tree) and usable as types.
const t = await tools.a({ root: { label: "x", kids: [{ label: "y", kids: [] }] } });
const count = (n: Tree): number => 1 + (n.kids ?? []).reduce((s, k) => s + count(k), 0);
// @ts-expect-error: Tree_2 nodes need an id, not a label.
await tools.c({ root: { label: "x" } });
return t.root ? count(t.root) : 0;
