/**
 * The areas that keep data inside a project, imported in the order their bundle sections
 * must import (a later area may refer to rows of an earlier one: templates name schemas).
 * Each area module registers its project counter and its bundle section when loaded.
 */
import "../schemas/projectArea.ts";
import "../templates/projectArea.ts";
import "../kanban/projectArea.ts";
import "../forms/projectArea.ts";
