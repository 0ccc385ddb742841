// Walk a revision's decision tree one question at a time. The questions and answers are
// rendered in the page (hidden, in the page's language); formulas.mjs (treeAt) finds the node.
import { treeAt, isLeaf } from "./formulas.mjs";
import { outputs, readState, writeState, setText } from "./dom.mjs";

export function setup(root, { prefix, data }) {
  const out = outputs(root);
  const nodes = new Map([...root.querySelectorAll("[data-wg-node]")].map((n) => [n.getAttribute("data-wg-node"), n]));
  const date = root.getAttribute("data-wg-tree");
  const rev = ((data && data.revisions) || []).find((r) => r.date === date && r.decision_tree);
  const tree = rev ? rev.decision_tree : null;
  const button = (sel) => root.querySelector(sel);
  const yes = button('[data-wg-answer="y"]'), no = button('[data-wg-answer="n"]');
  const back = button("[data-wg-back]"), restart = button("[data-wg-restart]");
  const valid = (path) => nodes.has(path) && (!tree || treeAt(tree, path) !== null);
  const leaf = (path) => (tree ? isLeaf(treeAt(tree, path)) : nodes.get(path).classList.contains("wgc-node--leaf"));

  const saved = readState(prefix)("tree") || "";
  let path = valid(saved) ? saved : "";
  if (out.status) out.status.hidden = true;
  setText(out.status, "");

  // The answers given so far, each a button back to its question.
  const trail = root.querySelector(".wgc-trail");
  const drawTrail = () => {
    if (!trail) return;
    const list = trail.querySelector("ol");
    list.replaceChildren();
    for (let i = 0; i < path.length; i++) {
      const at = path.slice(0, i), q = nodes.get(at) && nodes.get(at).querySelector(".wgc-node__q");
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "wgc-trail__step";
      b.setAttribute("data-wg-goto", at);
      const question = document.createElement("span");
      question.textContent = q ? q.textContent : "";
      const answer = document.createElement("strong");
      answer.textContent = (path[i] === "y" ? yes : no).textContent;
      b.append(question, " ", answer);
      li.append(b);
      list.append(li);
    }
    trail.hidden = path.length === 0;
  };

  const show = (save, focus) => {
    for (const [p, n] of nodes) n.hidden = p !== path;
    drawTrail();
    root.wgLast = path;
    const atLeaf = leaf(path);
    yes.disabled = atLeaf;
    no.disabled = atLeaf;
    back.disabled = path === "";
    restart.disabled = path === "";
    if (save) writeState(prefix, { tree: path || null });
    if (focus && (document.activeElement === null || document.activeElement.disabled || document.activeElement === document.body)) nodes.get(path).focus();
  };

  root.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b || b.disabled) return;
    if (b.hasAttribute("data-wg-answer")) {
      const next = path + b.getAttribute("data-wg-answer");
      if (valid(next)) path = next;
    } else if (b.hasAttribute("data-wg-goto")) {
      const at = b.getAttribute("data-wg-goto");
      if (valid(at) && path.startsWith(at)) path = at;
    } else if (b.hasAttribute("data-wg-back")) path = path.slice(0, -1);
    else if (b.hasAttribute("data-wg-restart")) path = "";
    show(true, true);
  });
  root.wgUpdate = () => show(false, false);
  show(false, false);
}
