/**
 * Kanban boards as a part of a project: the `kanban_boards_count` of the project resource
 * and the `kanban` section of project bundles (bundle.ts).
 */
import { sql } from "../db/pool.ts";
import { registerProjectCounter } from "../db/projects.ts";
import "./bundle.ts";

registerProjectCounter("kanban_boards_count", sql.fragment`(select count(*)::int from kanban_boards b where b.project_id = p.id)`);
