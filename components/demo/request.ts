/**
 * The demo form as the user types it, and its translation to the body of
 * POST /api/v1/demo/runs. Times are entered in seconds and sent in
 * milliseconds; dangling shares are fractions of Apps, as the API takes them.
 * Range checks are the API's: its `{error: {field, message}}` is shown next
 * to the input that `formFieldOf(field)` names.
 */
export interface DemoForm {
  apps: string;
  /** Databases, Caches and Secrets each; empty means one per App. */
  referents: string;
  readyMinS: string;
  readyMaxS: string;
  typo: string;
  wrongNamespace: string;
  kindNotInstalled: string;
  churn: boolean;
  churnAfterS: string;
  backoffPreset: 'client-go' | 'crossplane';
  timeoutS: string;
}

export type FormField = Exclude<keyof DemoForm, 'churn'>;

export const DEFAULT_FORM: DemoForm = {
  apps: '100',
  referents: '',
  readyMinS: '1',
  readyMaxS: '20',
  typo: '0.02',
  wrongNamespace: '0.01',
  kindNotInstalled: '0.01',
  churn: false,
  churnAfterS: '10',
  backoffPreset: 'client-go',
  timeoutS: '120',
};

export interface DemoRunRequest {
  apps: number | null;
  databases?: number;
  caches?: number;
  secrets?: number;
  readyAfter: { distribution: 'uniform'; minMs: number | null; maxMs: number | null };
  dangling: { typo: number; wrongNamespace: number; kindNotInstalled: number };
  churn?: { dropKind: 'Cache'; afterMs: number | null };
  backoffPreset: 'client-go' | 'crossplane';
  timeoutMs: number | null;
}

/** number reads a field; '' and text that is not a number become null, which the API rejects naming the field. */
function number(text: string): number | null {
  const t = text.trim();
  if (t === '') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

const ms = (seconds: string): number | null => {
  const s = number(seconds);
  return s === null ? null : Math.round(s * 1000);
};

/**
 * formToRequest builds the request body. Required values that are empty or
 * not numbers are sent as null so the API's answer names them; optional ones
 * (referents, dangling shares) fall back to the API's defaults.
 */
export function formToRequest(form: DemoForm): DemoRunRequest {
  const body: DemoRunRequest = {
    apps: number(form.apps),
    readyAfter: { distribution: 'uniform', minMs: ms(form.readyMinS), maxMs: ms(form.readyMaxS) },
    dangling: {
      typo: number(form.typo) ?? 0,
      wrongNamespace: number(form.wrongNamespace) ?? 0,
      kindNotInstalled: number(form.kindNotInstalled) ?? 0,
    },
    backoffPreset: form.backoffPreset,
    timeoutMs: ms(form.timeoutS),
  };
  const referents = number(form.referents);
  if (form.referents.trim() !== '') {
    // Sent even when not a number, so the API names the field.
    body.databases = referents as number;
    body.caches = referents as number;
    body.secrets = referents as number;
  }
  if (form.churn) body.churn = { dropKind: 'Cache', afterMs: ms(form.churnAfterS) };
  return body;
}

const FIELD_OF_API: Record<string, FormField> = {
  apps: 'apps',
  databases: 'referents',
  caches: 'referents',
  secrets: 'referents',
  readyAfter: 'readyMinS',
  'readyAfter.minMs': 'readyMinS',
  'readyAfter.maxMs': 'readyMaxS',
  'readyAfter.distribution': 'readyMinS',
  dangling: 'typo',
  'dangling.typo': 'typo',
  'dangling.wrongNamespace': 'wrongNamespace',
  'dangling.kindNotInstalled': 'kindNotInstalled',
  churn: 'churnAfterS',
  'churn.afterMs': 'churnAfterS',
  'churn.dropKind': 'churnAfterS',
  backoffPreset: 'backoffPreset',
  timeoutMs: 'timeoutS',
};

/** formFieldOf maps the API's error `field` to the input it concerns, or undefined for errors about the request as a whole. */
export function formFieldOf(apiField: string | undefined): FormField | undefined {
  return apiField === undefined ? undefined : FIELD_OF_API[apiField];
}

/** The unit each input is typed in, for messages the API words in its own units. */
export const FIELD_UNIT: Record<FormField, string> = {
  apps: '',
  referents: '',
  readyMinS: 's',
  readyMaxS: 's',
  typo: 'fraction',
  wrongNamespace: 'fraction',
  kindNotInstalled: 'fraction',
  churnAfterS: 's',
  backoffPreset: '',
  timeoutS: 's',
};

/**
 * fieldMessage is the API's message for display beside the input: the
 * "field: " prefix the API adds is dropped (the input's label says it),
 * and a bound stated in ms gets its value in seconds for the inputs typed
 * in seconds.
 */
export function fieldMessage(apiField: string | undefined, message: string): string {
  let text = message;
  if (apiField && text.startsWith(`${apiField}: `)) text = text.slice(apiField.length + 2);
  const field = formFieldOf(apiField);
  if (field && FIELD_UNIT[field] === 's') {
    const seconds = (n: string) => String(Number(n) / 1000);
    text = text
      .replace(
        /a number of milliseconds from (\d+) to (\d+)/g,
        (_, a: string, b: string) => `a number of seconds from ${seconds(a)} to ${seconds(b)}`,
      )
      .replace(/(\d+) ms\b/g, (_, n: string) => `${seconds(n)} s`);
  }
  return text;
}
