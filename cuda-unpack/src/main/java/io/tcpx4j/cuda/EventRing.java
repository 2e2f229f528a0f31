package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

import java.util.ArrayDeque;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventRecord;

/**
 * Tickets for asynchronous GPU work: {@link #record} puts a pooled event on a stream and returns a
 * ticket, {@link #isDone} polls that event and returns the event to the pool once it fired. Pending
 * tickets live in a power-of-two ring indexed by ticket number (tickets are consecutive), which grows
 * when a slot it needs still holds unfinished work; a ticket whose slot no longer holds it finished
 * earlier. Nothing is allocated per ticket in steady state.
 *
 * <p><b>Not thread-safe</b>: owners serialise calls (and make the events' context current).
 */
final class EventRing implements AutoCloseable {

    private long[] tickets = new long[64];
    private CUevent[] events = new CUevent[64];
    private final ArrayDeque<CUevent> pool = new ArrayDeque<>();
    private long next = 1;
    /** First failure seen: a CUDA context with a sticky error fails every later ticket too. */
    private TransferException failure;

    /** Records an event on {@code stream} and returns the ticket for everything queued on it so far. */
    long record(CUstream stream) {
        long ticket = next;
        int slot = place(ticket);
        CUevent event = pool.isEmpty() ? newEvent() : pool.pop();
        int result = cuEventRecord(event, stream);
        if (result != CUresult.CUDA_SUCCESS) {
            pool.push(event);
            throw CudaCheck.failure(result, "cuEventRecord");
        }
        next++;
        tickets[slot] = ticket;
        events[slot] = event;
        return ticket;
    }

    /** A ticket for work that already finished (done on the host). */
    long completed() {
        return next++;
    }

    /**
     * Whether the work behind {@code ticket} finished. Ticket 0 (no work) is always done.
     *
     * @throws TransferException INVALID_PARAM for a ticket never issued; BACKEND when the GPU work failed
     */
    boolean isDone(long ticket) {
        if (ticket == 0) {
            return true;
        }
        if (ticket < 0 || ticket >= next) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "unknown ticket " + ticket);
        }
        if (failure != null) {
            throw new TransferException(TransferException.Code.BACKEND, "GPU work failed earlier", failure);
        }
        int slot = (int) (ticket & (tickets.length - 1));
        if (tickets[slot] != ticket) {
            return true;
        }
        return poll(slot);
    }

    /** Whether {@code ticket} was recorded and not yet seen done (its event still sits in the ring). */
    boolean isPending(long ticket) {
        return ticket > 0 && tickets[(int) (ticket & (tickets.length - 1))] == ticket;
    }

    /** Whether any event was ever created (closing needs the context current only then). */
    boolean holdsEvents() {
        return !pool.isEmpty() || pending() > 0;
    }

    /** Tickets issued and not yet seen done. */
    int pending() {
        int n = 0;
        for (long t : tickets) {
            if (t != 0) {
                n++;
            }
        }
        return n;
    }

    private boolean poll(int slot) {
        int result = cuEventQuery(events[slot]);
        if (result == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        CUevent event = events[slot];
        tickets[slot] = 0;
        events[slot] = null;
        pool.push(event);
        if (result != CUresult.CUDA_SUCCESS) {
            // A failed kernel or copy poisons the context (sticky error): report, don't retry.
            failure = CudaCheck.failure(result, "GPU work behind a ticket");
            throw failure;
        }
        return true;
    }

    private int place(long ticket) {
        while (true) {
            int slot = (int) (ticket & (tickets.length - 1));
            if (tickets[slot] == 0 || poll(slot)) {
                return slot;
            }
            grow();
        }
    }

    private void grow() {
        long[] oldTickets = tickets;
        CUevent[] oldEvents = events;
        tickets = new long[oldTickets.length * 2];
        events = new CUevent[oldEvents.length * 2];
        // Distinct modulo n implies distinct modulo 2n: pending tickets never collide after growing.
        for (int i = 0; i < oldTickets.length; i++) {
            if (oldTickets[i] != 0) {
                int slot = (int) (oldTickets[i] & (tickets.length - 1));
                tickets[slot] = oldTickets[i];
                events[slot] = oldEvents[i];
            }
        }
    }

    private static CUevent newEvent() {
        CUevent event = new CUevent();
        // Timing off: recording and querying are cheaper, and tickets never measure time.
        CudaCheck.check(cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        return event;
    }

    /** Destroys every event, pending ones too (their tickets then read as done). */
    @Override
    public void close() {
        for (int i = 0; i < tickets.length; i++) {
            if (events[i] != null) {
                cuEventDestroy(events[i]);
                events[i] = null;
                tickets[i] = 0;
            }
        }
        while (!pool.isEmpty()) {
            cuEventDestroy(pool.pop());
        }
    }
}
