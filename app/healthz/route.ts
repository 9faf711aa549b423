import { getHealthz } from '@/server/api';
import { probe } from '@/server/route';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = probe(getHealthz);
