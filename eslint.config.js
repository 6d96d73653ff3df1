// Lint rules for the whole tree (npm run lint). Type-aware rules need the TypeScript project;
// formatting is left to prettier (npm run format:check).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first (src/README.md, "Layers"): a module may import from its own
 * layer and the layers below it, nothing above. Entries are folders, or files directly in src/.
 */
export const LAYERS = [
  ['core'],
  ['config', 'catalog', 'io'],
  ['replay.ts', 'replay-run.ts'],
  ['serve'],
  ['sweep'],
  ['score'],
  ['calibrate'],
  ['plan'],
  ['workflow'],
  ['cli', 'index.ts'],
];

/**
 * `import-x/no-restricted-paths` zones for LAYERS under `srcDir` (relative to `basePath`): each
 * layer is forbidden everything under src/ but its own layer and those below, so a folder that no
 * layer names cannot be imported at all until src/README.md and LAYERS place it.
 */
export function layerZones(srcDir = 'src') {
  const glob = (entry) => (entry.endsWith('.ts') ? `**/${srcDir}/${entry}` : `**/${srcDir}/${entry}/**`);
  return LAYERS.map((layer, index) => {
    const allowed = LAYERS.slice(0, index + 1).flat();
    return {
      target: layer.map((entry) => `${srcDir}/${entry}`),
      from: `${srcDir}/**`,
      except: allowed.map(glob),
      message: `${layer.join(', ')} may import only ${allowed.join(', ')} (src/README.md, "Layers").`,
    };
  });
}

/**
 * The layering rule and the resolver it needs (`.js` specifiers name `.ts` sources). An import the
 * resolver cannot find would pass no-restricted-paths unchecked, so no-unresolved is on too. And
 * the replay core does no I/O (src/core/README.md): no Node module there.
 */
export function layeringConfig(srcDir = 'src', basePath = import.meta.dirname) {
  return [
    {
      files: [`${srcDir}/**/*.ts`],
      plugins: { 'import-x': importX },
      settings: {
        'import-x/resolver-next': [
          createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'], extensionAlias: { '.js': ['.ts', '.js'] } }),
        ],
      },
      rules: {
        'import-x/no-restricted-paths': ['error', { basePath, zones: layerZones(srcDir) }],
        'import-x/no-unresolved': 'error',
      },
    },
    { files: [`${srcDir}/core/**/*.ts`], rules: { 'import-x/no-nodejs-modules': 'error' } },
  ];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  ...layeringConfig(),
  {
    // Tests read the JSON files commands write and assert on their fields: untyped reads are fine there.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // The command's entry is CommonJS (bin/package.json; bin/servesim.js says why).
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
