// Across servers: write a note with the current UTC time, commit-free status of the repo,
// and the note read back (filesystem, time, git).
const [root] = String((await tools.fs_list_allowed_directories({})).content[0].text)
  .split("\n")
  .filter((line: string) => line.startsWith("/"));
const now = JSON.parse(String((await tools.time_get_current_time({ timezone: "Etc/UTC" })).content[0].text)) as {
  datetime: string;
};
await tools.fs_write_file({ path: `${root}/note.md`, content: `written at ${now.datetime}\n` });
const [note, status] = await Promise.all([
  tools.fs_read_text_file({ path: `${root}/note.md`, head: 1 }),
  tools.git_git_status({ repo_path: REPO }),
]);
console.log(String(status.content[0].text).split("\n")[0]);
return String(note.content[0].text).startsWith("written at ");
