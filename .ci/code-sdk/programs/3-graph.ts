// A small knowledge graph, then what it holds (memory server; typed structured values).
await tools.mem_create_entities({
  entities: [
    { name: "Ada", entityType: "person", observations: ["wrote the first program"] },
    { name: "Engine", entityType: "machine", observations: ["analytical"] },
  ],
});
await tools.mem_create_relations({
  relations: [{ from: "Ada", to: "Engine", relationType: "programmed" }],
});
const graph = await tools.mem_read_graph({});
const found = await tools.mem_search_nodes({ query: "Ada" });
return {
  entities: graph.entities.map((e) => e.name).sort(),
  relations: graph.relations.length,
  found: found.entities.some((e) => e.name === "Ada"),
};
