// Across servers: write a note stamped by the time server, read it back beside the repository's
// status (filesystem, time, git).
const text = (r: McpResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const [root] = (await tools.fs_list_allowed_directories({})).content
  .split("\n")
  .filter((line) => line.startsWith("/"));
const now = await tools.time_get_current_time({ timezone: "Etc/UTC" });
await tools.fs_write_file({
  path: `${root}/note.md`,
  content: `written at ${now.datetime}\n`,
});
const [note, status] = await Promise.all([
  tools.fs_read_text_file({ path: `${root}/note.md`, head: 1 }),
  tools.git_git_status({ repo_path: REPO }),
]);
console.log(text(status).split("\n")[0]);
return note.content.startsWith("written at 20");
