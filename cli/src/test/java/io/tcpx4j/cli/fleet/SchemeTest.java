package io.tcpx4j.cli.fleet;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchemeTest {

    @Test
    void pairwisePairsEvenRanksWithTheNextOne() {
        assertThat(Scheme.PAIRWISE.targetsOf(2, 4)).containsExactly(3);
        assertThat(Scheme.PAIRWISE.targetsOf(3, 4)).isEmpty();
        assertThat(Scheme.PAIRWISE.initiatorsOf(3, 4)).containsExactly(2);
        assertThat(Scheme.PAIRWISE.initiatorsOf(0, 4)).isEmpty();
        assertThat(Scheme.PAIRWISE.slots(0, 4)).isEqualTo(1);
        assertThat(Scheme.PAIRWISE.workersProblem(3)).contains("even");
        assertThat(Scheme.PAIRWISE.workersProblem(4)).isNull();
    }

    @Test
    void manyToOneGivesEveryInitiatorASliceOfRankZero() {
        assertThat(Scheme.MANY_TO_ONE.initiatorsOf(0, 4)).containsExactly(1, 2, 3);
        assertThat(Scheme.MANY_TO_ONE.targetsOf(2, 4)).containsExactly(0);
        assertThat(Scheme.MANY_TO_ONE.targetsOf(0, 4)).isEmpty();
        assertThat(Scheme.MANY_TO_ONE.slots(0, 4)).isEqualTo(3);
        assertThat(Scheme.MANY_TO_ONE.slots(3, 4)).isEqualTo(1);
        // rank 3 writes into the third slice of rank 0, from the only slice of its own
        assertThat(Scheme.MANY_TO_ONE.slot(0, 3, 0, 4)).isEqualTo(2);
        assertThat(Scheme.MANY_TO_ONE.slot(3, 3, 0, 4)).isEqualTo(0);
    }

    @Test
    void oneToManyGivesRankZeroASlicePerTarget() {
        assertThat(Scheme.ONE_TO_MANY.targetsOf(0, 3)).containsExactly(1, 2);
        assertThat(Scheme.ONE_TO_MANY.initiatorsOf(2, 3)).containsExactly(0);
        assertThat(Scheme.ONE_TO_MANY.slots(0, 3)).isEqualTo(2);
        assertThat(Scheme.ONE_TO_MANY.slot(0, 0, 2, 3)).isEqualTo(1);
        assertThat(Scheme.ONE_TO_MANY.slot(2, 0, 2, 3)).isEqualTo(0);
        assertThatThrownBy(() -> Scheme.ONE_TO_MANY.slot(1, 1, 2, 3)).hasMessageContaining("no pair");
    }

    @Test
    void everyInitiatorTargetPairIsSeenFromBothSides() {
        for (Scheme s : Scheme.values()) {
            for (int n : List.of(2, 4, 6)) {
                for (int r = 0; r < n; r++) {
                    for (int t : s.targetsOf(r, n)) {
                        assertThat(s.initiatorsOf(t, n)).as(s + " " + r + "->" + t).contains(r);
                    }
                }
            }
        }
    }

    @Test
    void namesAreNixlbenchsOrHyphenated() {
        assertThat(Scheme.parse("manytoone")).isEqualTo(Scheme.MANY_TO_ONE);
        assertThat(Scheme.parse("one-to-many")).isEqualTo(Scheme.ONE_TO_MANY);
        assertThat(Scheme.parse("Pairwise")).isEqualTo(Scheme.PAIRWISE);
        assertThatThrownBy(() -> Scheme.parse("tp")).hasMessageContaining("pairwise, manytoone or onetomany");
        assertThat(Scheme.MANY_TO_ONE.workersProblem(1)).contains("at least 2");
    }
}
