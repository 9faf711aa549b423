export const THEME_STORAGE_KEY = 'refwatch.theme';

/**
 * THEME_BOOT runs before first paint (inline in the document head) so the
 * page never flashes the wrong theme: a stored choice wins, else the system's.
 */
export const THEME_BOOT = `try{var t=localStorage.getItem('${THEME_STORAGE_KEY}');if(t!=='light'&&t!=='dark'){t=matchMedia('(prefers-color-scheme: dark)').matches?'dark':'light'}document.documentElement.dataset.theme=t}catch(e){document.documentElement.dataset.theme='light'}`;
