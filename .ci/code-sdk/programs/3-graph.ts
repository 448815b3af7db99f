// A small knowledge graph, then what it holds (memory server).
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
const shown = graph.structuredContent as { entities: { name: string }[]; relations: unknown[] } | undefined;
const found = await tools.mem_search_nodes({ query: "Ada" });
return {
  entities: shown ? shown.entities.map((e) => e.name).sort() : [],
  relations: shown ? shown.relations.length : 0,
  found: JSON.stringify(found.structuredContent ?? found.content).includes("Ada"),
};
