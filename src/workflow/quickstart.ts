export interface QuickstartOptions { out: string; threads?: number }
export async function runQuickstart(_options: QuickstartOptions): Promise<{ text: string }> {
  return { text: 'not yet\n' };
}
