'use client';

import type { ReactNode } from 'react';
import { LiveData } from '../data/LiveData';
import { ThemeProvider } from '../ui/theme';

export function Providers({ children }: { children: ReactNode }) {
  return (
    <ThemeProvider>
      <LiveData>{children}</LiveData>
    </ThemeProvider>
  );
}
