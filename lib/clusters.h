/*
 * clusters.h - the shape of a retention path (clusters.c), internal.
 * Never installed.
 */
#ifndef HD_CLUSTERS_H
#define HD_CLUSTERS_H

#include "hd_int.h"

/*
 * Gives each of targets[0..n) the id of the shape of its retention path
 * in r's tree: the root category, then, hop by hop, what each object on
 * the path is (hd_store_node_name) and how the one before holds it (the
 * reference name, an Array element's index and a Hash value's key as "[*]").
 * Two targets get the same id exactly when their shapes are equal
 * (compared as text, no hashing shortcut); a target no root reaches
 * gets HD__NONE. Near-linear: every object on the union of the paths is
 * looked at once, however deep the paths are.
 * @param out n ids
 * @return 0, HD_ENOMEM
 */
HD_HIDDEN int hd__path_shapes(uint32_t *out, const hd_store *s,
			      const hd_reach *r, const hd_node_id *targets,
			      size_t n, hd_error *err);

/*
 * The shape of path as text, as people read it: "vm -> Object ::SERVICES
 * -> Array [*] -> Service @cache -> LeakyCache @entries -> Hash" (the
 * bytes of the names, not escaped). Returns a NUL-terminated string from hd__malloc (its size
 * in *size, for hd__free), or NULL when out of memory.
 */
HD_HIDDEN char *hd__path_shape_text(const hd_store *s,
				    const hd_root_path *path, size_t *size);

#endif
