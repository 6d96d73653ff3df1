/** The measured points `servesim calibrate catalog` fits by default: the bundled silicon sample. */
export const CATALOG_SAMPLE = 'data/silicon/aic-silicon-sample.csv';
