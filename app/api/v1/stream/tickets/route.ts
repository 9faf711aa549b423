import { postStreamTicket } from '@/server/api';
import { route } from '@/server/route';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = route(postStreamTicket);
