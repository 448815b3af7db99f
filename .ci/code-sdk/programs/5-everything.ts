// Typed arguments, a caught failure and structured content (everything server).
const text = (r: McpResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const sum = await tools["every_get-sum"]({ a: 2, b: 40 });
const echoed = await tools.every_echo({ message: "hello" });
let failed = "";
try {
  // @ts-expect-error: a and b are numbers; the call fails its schema check.
  await tools["every_get-sum"]({ a: "two", b: 40 });
} catch (e) {
  failed = e instanceof ToolCallError ? e.toolName : "other";
}
const weather = await tools["every_get-structured-content"]({ location: "New York" });
return {
  sum: text(sum),
  echoed: text(echoed),
  failed,
  structured: typeof weather === "object" && weather !== null && !("content" in weather),
};
