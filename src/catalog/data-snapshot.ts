/**
 * Where the build's snapshot of the shipped data files is (`shipped-data.ts` reads it), relative
 * to the package root: nowhere in the source. `npm run build` bundles the command line with this
 * module replaced by one naming the folder it writes the snapshot to (`scripts/bundle-cli.mjs`),
 * so only the bundled command line reads a snapshot, the one of its own build.
 */
export const DATA_SNAPSHOT_DIR: string | null = null;
