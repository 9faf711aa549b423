'use client';

import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import type { Theme } from '../graph/style';

import { THEME_STORAGE_KEY as STORAGE_KEY } from './themeBoot';

interface ThemeValue {
  theme: Theme;
  /** true when the theme follows the system setting. */
  followsSystem: boolean;
  setTheme(theme: Theme): void;
}

const ThemeContext = createContext<ThemeValue>({ theme: 'light', followsSystem: true, setTheme: () => {} });

export function useTheme(): ThemeValue {
  return useContext(ThemeContext);
}

function readDocumentTheme(): Theme {
  return typeof document !== 'undefined' && document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
}

export function ThemeProvider({ children }: { children: ReactNode }) {
  const [theme, setThemeState] = useState<Theme>('light');
  const [followsSystem, setFollowsSystem] = useState(true);

  useEffect(() => {
    setThemeState(readDocumentTheme());
    let stored: string | null = null;
    try {
      stored = localStorage.getItem(STORAGE_KEY);
    } catch {
      // storage may be blocked; the system theme applies
    }
    setFollowsSystem(stored !== 'light' && stored !== 'dark');
    const media = matchMedia('(prefers-color-scheme: dark)');
    const onChange = () => {
      let explicit: string | null = null;
      try {
        explicit = localStorage.getItem(STORAGE_KEY);
      } catch {
        // as above
      }
      if (explicit === 'light' || explicit === 'dark') return;
      const next: Theme = media.matches ? 'dark' : 'light';
      document.documentElement.dataset.theme = next;
      setThemeState(next);
    };
    media.addEventListener('change', onChange);
    return () => media.removeEventListener('change', onChange);
  }, []);

  const setTheme = useCallback((next: Theme) => {
    document.documentElement.dataset.theme = next;
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // the choice lasts for this page only
    }
    setFollowsSystem(false);
    setThemeState(next);
  }, []);

  return <ThemeContext.Provider value={{ theme, followsSystem, setTheme }}>{children}</ThemeContext.Provider>;
}
