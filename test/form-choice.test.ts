/**
 * `calibrate engine --form auto`: the rule that picks a form per stratum from the engine-fit
 * benchmark's held-out errors, and the table file it reads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { autoForm, chooseForm, fitFormsFileText, loadFitForms, type FitFormsRow } from '../src/calibrate/form-choice.js';

const row = (stratum: string, roofline: [number, number], linear: [number, number]): FitFormsRow => {
  const errors = { roofline: { ttft_mape: roofline[0], itl_mape: roofline[1] }, linear: { ttft_mape: linear[0], itl_mape: linear[1] } };
  return { stratum, form: chooseForm(errors), ...errors, points: 12, deployments: 3 };
};

describe('the form --form auto fits', () => {
  it('is the physics form only where it is no worse on TTFT and on ITL', () => {
    expect(row('a', [8, 4], [9, 4]).form).toBe('roofline');
    expect(row('a', [9, 4], [9, 4]).form).toBe('roofline');
    // Better TTFT, worse ITL: not no-worse, so linear.
    expect(row('a', [5, 4.1], [9, 4]).form).toBe('linear');
    expect(row('a', [9.1, 1], [9, 4]).form).toBe('linear');
  });

  it('must also be no worse on the check set, where it has the stratum', () => {
    const bench = { roofline: { ttft_mape: 8, itl_mape: 4 }, linear: { ttft_mape: 9, itl_mape: 4 } };
    expect(chooseForm(bench)).toBe('roofline');
    expect(chooseForm(bench, { roofline: { ttft_mape: 10, itl_mape: 3 }, linear: { ttft_mape: 12, itl_mape: 3 } })).toBe('roofline');
    // The benchmark's choice, contradicted on the check set's TTFT (as vLLM dense's 77 % against 12 % was): linear.
    expect(chooseForm(bench, { roofline: { ttft_mape: 77.4, itl_mape: 8.8 }, linear: { ttft_mape: 11.9, itl_mape: 7 } })).toBe('linear');
  });

  it('reads the stratum row, says why, and falls back where there is no catalog entry or no row', () => {
    const table = { basis: 'test', rows: [row('vLLM dense', [8, 3], [10, 4]), row('SGLang MoE', [20, 6], [12, 5])] };
    const vllm = autoForm('vLLM dense', table);
    expect(vllm.form).toBe('roofline');
    expect(vllm.reason).toContain('physics 8 / 3 %, linear 10 / 4 %');
    expect(autoForm('SGLang MoE', table).form).toBe('linear');
    expect(autoForm(null, table)).toMatchObject({ form: 'linear', reason: expect.stringContaining('not in the catalog') });
    // No evidence: the simple fit.
    expect(autoForm('TensorRT-LLM dense', table)).toMatchObject({
      form: 'linear',
      reason: expect.stringContaining('no benchmark evidence'),
    });
  });

  it('round-trips its file and names the file and field of a bad one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forms-'));
    try {
      const file = join(dir, 'forms.yaml');
      writeFileSync(file, fitFormsFileText([row('vLLM dense', [8.04, 3], [10, 4])], 'test'));
      const table = loadFitForms(file);
      expect(table?.rows[0]).toMatchObject({ stratum: 'vLLM dense', form: 'roofline', roofline: { ttft_mape: 8, itl_mape: 3 } });
      const checked = { ...row('vLLM dense', [8, 3], [10, 4]), form: 'linear' as const };
      checked.check = {
        roofline: { ttft_mape: 77.44, itl_mape: 8.8 },
        linear: { ttft_mape: 11.9, itl_mape: 7 },
        points: 40,
        deployments: 5,
      };
      writeFileSync(file, fitFormsFileText([checked], 'test'));
      expect(loadFitForms(file)?.rows[0].check).toEqual({
        roofline: { ttft_mape: 77.4, itl_mape: 8.8 },
        linear: { ttft_mape: 11.9, itl_mape: 7 },
        points: 40,
        deployments: 5,
      });
      expect(autoForm('vLLM dense', loadFitForms(file)).reason).toContain(
        'check set: physics 77.4 / 8.8 %, linear 11.9 / 7 % (40 points of 5 deployments)',
      );
      writeFileSync(
        file,
        'basis: x\nrows:\n  - stratum: a\n    form: physics\n    roofline: {ttft_mape: 1, itl_mape: 1}\n    linear: {ttft_mape: 1, itl_mape: 1}\n    points: 1\n    deployments: 1\n',
      );
      expect(() => loadFitForms(file)).toThrow(/forms\.yaml: rows\.0\.form/);
      expect(loadFitForms(join(dir, 'absent.yaml'))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
