/**
 * A nested folder tree from flat output paths (`src/models/user.ts`): folders first, then
 * files, each level sorted by name; folders carry the total size of what they hold.
 */

export interface TreeNode {
  name: string;
  /** Path from the output root. */
  path: string;
  type: "folder" | "file";
  /** Bytes (files), or the sum of the files below (folders); null when sizes are unknown. */
  size: number | null;
  children?: TreeNode[];
}

/** Builds the tree of `files` (path and, when known, size). */
export function buildTree(files: Iterable<{ path: string; size?: number | null }>): TreeNode[] {
  const root: TreeNode = { name: "", path: "", type: "folder", size: 0, children: [] };
  const folders = new Map<string, TreeNode>([["", root]]);
  for (const file of files) {
    const parts = file.path.split("/");
    let parent = root;
    for (let i = 0; i < parts.length - 1; i += 1) {
      const path = parts.slice(0, i + 1).join("/");
      let folder = folders.get(path);
      if (!folder) {
        folder = { name: parts[i]!, path, type: "folder", size: 0, children: [] };
        folders.set(path, folder);
        parent.children!.push(folder);
      }
      parent = folder;
    }
    parent.children!.push({ name: parts[parts.length - 1]!, path: file.path, type: "file", size: file.size ?? null });
  }
  sortAndSum(root);
  return root.children!;
}

function sortAndSum(node: TreeNode): number | null {
  if (node.type === "file") return node.size;
  let total: number | null = 0;
  for (const child of node.children!) {
    const size = sortAndSum(child);
    total = total === null || size === null ? null : total + size;
  }
  node.children!.sort((a, b) => (a.type === b.type ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.type === "folder" ? -1 : 1));
  node.size = total;
  return total;
}
