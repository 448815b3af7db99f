// Every .txt file under the root with its line count (filesystem server). The text blocks are
// read through their type; the structured value is typed by the server's outputSchema.
const text = (r: McpResult<unknown>) =>
  r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const [root] = text(await tools.fs_list_allowed_directories({}))
  .split("\n")
  .filter((line) => line.startsWith("/"));
const listing = await tools.fs_list_directory({ path: root });
const names = (listing.structuredContent?.content ?? "")
  .split("\n")
  .filter((line) => line.startsWith("[FILE] ") && line.endsWith(".txt"))
  .map((line) => line.slice("[FILE] ".length));
const counts: Record<string, number> = {};
for (const name of names) {
  const file = await tools.fs_read_text_file({ path: `${root}/${name}` });
  counts[name] = text(file).split("\n").filter((l) => l !== "").length;
}
return counts;
