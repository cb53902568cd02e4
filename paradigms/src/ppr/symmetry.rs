//! Symmetry classes: nodes whose exact scores are provably equal, for ties no error bound separates.

use super::*;

/// Classes of nodes whose exact scores are provably equal, built once per graph; per query,
/// seeds split or void them as below (applied in `certify`).
///
/// - Pendant trees (what peeling leaves off the graph removes, rooted where they hang): two
///   nodes whose paths from the same attachment node run through isomorphic rooted subtrees
///   level by level are exchanged by automorphisms that swap isomorphic sibling subtrees and
///   fix everything else, so PPR gives them equal scores when no seed lies in the swapped
///   subtrees. Per query, a class splits by each member's lowest ancestor-or-self whose
///   subtree holds a seed (none when its branch, the subtree hanging off the attachment, holds
///   none): members with the same such ancestor `z` meet at or below `z`, and the subtrees
///   swapped there lie strictly below `z`, so hold no seed; a member that is `z` itself is a
///   class of its own. A hub's leaves are the common case; a hub's isomorphic two-node chains
///   are the next.
/// - The rest (the 2-core): twins, nodes with the same open neighbourhood (`N(u) = N(w)`) or
///   the same closed one (`N[u] = N[w]`). Open twins sum the same neighbours' shares; closed
///   twins have equal degrees and `pi(u) - pi(w) = -damping (pi(u) - pi(w)) / deg`, so both
///   tie when neither is a seed.
#[derive(Debug, Clone)]
pub(super) struct Symmetry {
    /// Class of each node, [`NO_CLASS`] when it has no other member.
    pub(super) class: Vec<u32>,
    /// Branch of each pendant node (the node id of its top), [`NO_CLASS`] in the 2-core.
    pub(super) branch: Vec<u32>,
    /// Parent of each pendant node below the top of its branch, else [`NO_CLASS`].
    pub(super) up: Vec<u32>,
}

/// No class, no branch, no parent.
pub(super) const NO_CLASS: u32 = u32::MAX;

impl Symmetry {
    pub(super) fn build(csr: &Csr) -> Symmetry {
        let n = csr.node_count();
        // Peel leaves, layer by layer: each peeled node's parent is the neighbour left when it
        // went (none for the last node of a tree component, its root: a centre of the tree, so
        // a symmetric tree's symmetric parts hang off one root).
        let mut degree: Vec<u32> = (0..n as u32).map(|v| csr.degree(v) as u32).collect();
        let mut peeled = vec![false; n];
        let mut parent = vec![NO_CLASS; n];
        let mut order: Vec<u32> = Vec::new();
        let mut queue: VecDeque<u32> = (0..n as u32).filter(|&v| degree[v as usize] == 1).collect();
        while let Some(v) = queue.pop_front() {
            if peeled[v as usize] {
                continue;
            }
            peeled[v as usize] = true;
            order.push(v);
            for &u in csr.neighbors(v) {
                if !peeled[u as usize] {
                    parent[v as usize] = u;
                    degree[u as usize] -= 1;
                    if degree[u as usize] == 1 {
                        queue.push_back(u);
                    }
                }
            }
        }
        // Canonical form of each peeled node's rooted subtree (children before parents in
        // peeling order): the sorted forms of its children, interned.
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &v in &order {
            if parent[v as usize] != NO_CLASS && peeled[parent[v as usize] as usize] {
                children[parent[v as usize] as usize].push(v);
            }
        }
        let mut forms: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut form = vec![0u32; n];
        for &v in &order {
            let mut key: Vec<u32> = children[v as usize]
                .iter()
                .map(|&c| form[c as usize])
                .collect();
            key.sort_unstable();
            let next = forms.len() as u32;
            form[v as usize] = *forms.entry(key).or_insert(next);
        }
        // Classes, parents first: (the parent's class, or the parent itself where it is an
        // attachment or a tree's root, and the node's form).
        let mut keys: HashMap<(bool, u32, u32), u32> = HashMap::new();
        let mut class = vec![NO_CLASS; n];
        let mut branch = vec![NO_CLASS; n];
        let mut up = vec![NO_CLASS; n];
        for &v in order.iter().rev() {
            let p = parent[v as usize];
            if p == NO_CLASS {
                continue; // a tree's root: no class, no branch
            }
            let p_is_node = !peeled[p as usize] || parent[p as usize] == NO_CLASS;
            let key = if p_is_node {
                branch[v as usize] = v;
                (true, p, form[v as usize])
            } else {
                branch[v as usize] = branch[p as usize];
                up[v as usize] = p;
                (false, class[p as usize], form[v as usize])
            };
            let next = keys.len() as u32;
            class[v as usize] = *keys.entry(key).or_insert(next);
        }
        // Twins in the 2-core, numbered after the tree classes.
        let offset = keys.len() as u32;
        let neighbourhood = |v: u32, closed: bool| {
            let mut set = csr.neighbors(v).to_vec();
            if closed {
                set.push(v);
            }
            set.sort_unstable();
            set
        };
        // Each 2-core node's two neighbourhoods, numbered by group as first seen.
        let mut groups: HashMap<(bool, Vec<u32>), u32> = HashMap::new();
        let mut size: Vec<u32> = Vec::new();
        let mut of: Vec<(u32, [u32; 2])> = Vec::new();
        for v in (0..n as u32).filter(|&v| !peeled[v as usize] && csr.degree(v) > 0) {
            let ids = [false, true].map(|closed| {
                let next = groups.len() as u32;
                let id = *groups
                    .entry((closed, neighbourhood(v, closed)))
                    .or_insert(next);
                if id == next {
                    size.push(0);
                }
                size[id as usize] += 1;
                id
            });
            of.push((v, ids));
        }
        // No node has twins of both kinds (an open twin `w` of `u` and a closed twin `x` of
        // `u` would make `w` both a neighbour of `x` and not one), so one class per node.
        for (v, ids) in of {
            for id in ids {
                if size[id as usize] > 1 {
                    class[v as usize] = offset + id;
                }
            }
        }
        // Tree classes with one member name nothing.
        let mut members: HashMap<u32, u32> = HashMap::new();
        for &c in &class {
            if c != NO_CLASS {
                *members.entry(c).or_insert(0) += 1;
            }
        }
        for c in &mut class {
            if *c != NO_CLASS && members[c] < 2 {
                *c = NO_CLASS;
            }
        }
        Symmetry { class, branch, up }
    }
}
